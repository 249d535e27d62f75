package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Tool names offered to the model are "mcp__<server>__<tool>". Providers
// accept only ^[A-Za-z0-9_-]{1,64}$ (OpenAI and Anthropic alike), so every
// other character becomes '_' and a name longer than 64 is cut and given a
// digest of the original, which also tells apart two tools whose names
// sanitise alike.
const (
	namePrefix  = "mcp__"
	nameSep     = "__"
	maxToolName = 64
)

// ToolName is the name the model sees for tool of server.
func ToolName(server, tool string) string {
	name := namePrefix + sanitize(server) + nameSep + sanitize(tool)
	if len(name) <= maxToolName {
		return name
	}
	return withDigest(name, server+"\x00"+tool)
}

func withDigest(name, original string) string {
	sum := sha256.Sum256([]byte(original))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), maxToolName-len(suffix))] + suffix
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// uniqueNames names a server's tools, giving a digest suffix to any whose
// sanitised name another tool of the server already took ("a.b" and "a_b").
func uniqueNames(server string, tools []ToolInfo) []string {
	names := make([]string, len(tools))
	taken := map[string]bool{}
	for i, t := range tools {
		n := ToolName(server, t.Name)
		if taken[n] {
			n = withDigest(n, server+"\x00"+t.Name)
		}
		taken[n] = true
		names[i] = n
	}
	return names
}
