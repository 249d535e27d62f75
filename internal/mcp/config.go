// Package mcp connects Caduceus to Model Context Protocol servers and offers
// their tools to the agent. A Manager owns one connection per configured
// server (a local command over stdio or a streamable-HTTP endpoint), built
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk): it starts
// a server on first use, lists its tools, calls them with a timeout,
// restarts a server whose process or connection died (with backoff), and
// follows configuration changes (Update) without restarting Caduceus.
// NewTools adapts the servers's tools to tool.Tool, named mcp__<server>__<tool>.
//
// Servers are given as values (ServerConfig); where they are stored and how
// a person edits them is the caller's business.
package mcp

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Transports a server may be reached over.
const (
	TransportStdio = "stdio" // a local command, JSON-RPC over its stdin/stdout
	TransportHTTP  = "http"  // the streamable-HTTP transport
)

// Defaults for ServerConfig's zero durations.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
)

// ServerConfig describes one MCP server. Env and Headers may hold secrets
// (API keys, bearer tokens): they are passed to the server and never
// logged, and String omits them.
type ServerConfig struct {
	// Name identifies the server and prefixes its tools' names:
	// 1-32 letters, digits, '-' or '_', beginning and ending with a letter
	// or digit, without "__" (the separator of namespaced tool names).
	Name string
	// Transport is TransportStdio or TransportHTTP.
	Transport string

	// Command, Args, Env and Dir describe a stdio server. Env adds
	// variables ("NAME=value") to a minimal environment (tool.CommandEnv:
	// PATH, HOME, the locale, ...): Caduceus's own secrets never reach it.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL and Headers describe a streamable-HTTP server; Headers are sent
	// with every request (e.g. Authorization).
	URL     string
	Headers map[string]string

	// StartTimeout bounds starting a server: the process or connection,
	// the initialize handshake and listing its tools
	// (default DefaultStartTimeout).
	StartTimeout time.Duration
	// CallTimeout bounds one tool call (default DefaultCallTimeout).
	CallTimeout time.Duration
}

// A server name begins and ends with a letter or digit and holds no "__":
// then the first "__" after "mcp__" in a tool name ends the server's name,
// and no two servers' tools can be named alike ("a_" + "__" + "b" would be
// "a" + "__" + "_b").
var nameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,30}[A-Za-z0-9])?$`)

// ErrInvalidConfig wraps every configuration error.
var ErrInvalidConfig = errors.New("invalid MCP server configuration")

// Validate reports what is wrong with c, if anything.
func (c ServerConfig) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: server %q: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, a...))
	}
	if !nameRE.MatchString(c.Name) || strings.Contains(c.Name, "__") {
		return bad("name must be 1-32 letters, digits, '-' or '_', begin and end with a letter or digit, and hold no \"__\"")
	}
	switch c.Transport {
	case TransportStdio:
		if strings.TrimSpace(c.Command) == "" {
			return bad("a stdio server needs a command")
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return bad("a stdio server takes no URL or headers")
		}
		for _, e := range c.Env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				return bad("environment entries are NAME=value")
			}
		}
	case TransportHTTP:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("a streamable-HTTP server needs an http(s) URL")
		}
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 || c.Dir != "" {
			return bad("a streamable-HTTP server takes no command, arguments, environment or directory")
		}
		for k := range c.Headers {
			if k == "" || strings.ContainsAny(k, " :\r\n") {
				return bad("header names must be tokens")
			}
		}
	default:
		return bad("transport must be %q or %q", TransportStdio, TransportHTTP)
	}
	if c.StartTimeout < 0 || c.CallTimeout < 0 {
		return bad("timeouts cannot be negative")
	}
	return nil
}

func (c ServerConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return DefaultStartTimeout
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

// Equal reports whether c and o describe the same server; Update restarts
// a server whose configuration is no longer Equal.
func (c ServerConfig) Equal(o ServerConfig) bool {
	return c.Name == o.Name && c.Transport == o.Transport &&
		c.Command == o.Command && slices.Equal(c.Args, o.Args) &&
		slices.Equal(c.Env, o.Env) && c.Dir == o.Dir &&
		c.URL == o.URL && maps.Equal(c.Headers, o.Headers) &&
		c.StartTimeout == o.StartTimeout && c.CallTimeout == o.CallTimeout
}

// String describes the server for logs and errors, without the values of
// its environment or headers.
func (c ServerConfig) String() string {
	if c.Transport == TransportHTTP {
		// The URL's user info and query may hold credentials.
		where := c.URL
		if u, err := url.Parse(c.URL); err == nil {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			where = u.String()
		}
		return fmt.Sprintf("%s (http %s)", c.Name, where)
	}
	return fmt.Sprintf("%s (stdio %s)", c.Name, c.Command)
}
