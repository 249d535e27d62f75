// Package policy decides, before a tool call runs, whether it may run on its
// own, needs a person's approval first, or must not run at all.
//
// A call describes itself with a tool.Intent. The decision depends on the
// approval mode the person chose:
//
//   - manual asks for every call that has an effect;
//   - smart (the default) asks only for risky calls: dangerous commands,
//     calls to this machine's or the private network's services, and
//     commands that cannot be read with confidence;
//   - off asks for nothing but dangerous commands.
//
// In every mode some calls are refused outright: the hard-deny list of
// commands (wiping the disk or the home directory, fork bombs) and file
// writes that leave the workspace. Dangerous commands ask in every mode, and
// a remembered approval rule never answers for the person about them
// (Decision.RuleEligible).
//
// Commands are parsed as bash (mvdan.cc/sh/v3/syntax, see shell.go), the
// syntax tree is walked to every program a command line runs with its
// flags, and the tables in patterns.go are matched against those. This is a guard rail against
// mistakes that cannot be undone, not a sandbox: a model set on doing harm
// can write a script and run it. What the reader cannot follow it does not
// guess about; it asks (fails closed).
package policy

import (
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Mode is how much the person wants to be asked.
type Mode string

const (
	ModeManual Mode = "manual"
	ModeSmart  Mode = "smart"
	ModeOff    Mode = "off"
)

// DefaultMode is the mode of an empty setting.
const DefaultMode = ModeSmart

// Modes lists the valid modes, strictest first.
func Modes() []Mode { return []Mode{ModeManual, ModeSmart, ModeOff} }

// ParseMode reads a mode setting. Case and surrounding space are ignored; an
// empty setting is DefaultMode.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if m == "" {
		return DefaultMode, nil
	}
	for _, v := range Modes() {
		if m == v {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown approval mode %q: want manual, smart or off", s)
}

// Verdict is what happens to a call. The zero value is none of them, so a
// caller that forgets to decide does not run anything.
type Verdict string

const (
	Allow Verdict = "allow" // run without asking
	Ask   Verdict = "ask"   // run only if the person (or a remembered rule) approves
	Deny  Verdict = "deny"  // never run
)

// Risk codes say why a call was not simply allowed. They are stable: clients
// may branch on them.
const (
	RiskNone = ""
	// RiskHardDeny: a command on the hard-deny list.
	RiskHardDeny = "hard_deny"
	// RiskDangerous: a command on the dangerous list.
	RiskDangerous = "dangerous_command"
	// RiskUnparsed: a command the reader could not follow.
	RiskUnparsed = "unparsed_command"
	// RiskOutsideWorkspace: a file write that leaves the workspace (denied),
	// or that does not say where it writes (asked).
	RiskOutsideWorkspace = "outside_workspace"
	// RiskNetworkPrivate: a request to this machine or the private network.
	RiskNetworkPrivate = "network_private"
	// RiskSideEffect: a call with an effect, asked about because the mode
	// asks for all of them.
	RiskSideEffect = "side_effect"
	// RiskToolRule: a call refused by the tool's configured rule (an MCP
	// server's or tool's "deny").
	RiskToolRule = "tool_rule"
)

// Input is one call to decide on.
type Input struct {
	// Mode is the approval mode; empty means DefaultMode, and an unknown
	// value is treated as ModeManual (the strictest).
	Mode Mode
	// Tool is the tool's name.
	Tool   string
	Intent tool.Intent
	// Workspace is the absolute root the session works in.
	Workspace string
}

// Decision is the policy's answer.
type Decision struct {
	Verdict Verdict
	// Reason is a short sentence for the person ("Recursive delete"); empty
	// when the call is simply allowed.
	Reason string
	// Risk is one of the Risk codes.
	Risk string
	// RuleEligible says whether a remembered approval rule (see Match) may
	// answer an Ask in the person's place. It is only ever true for Ask,
	// and never for dangerous or unreadable commands: those are asked every
	// time.
	RuleEligible bool
}

func allow() Decision { return Decision{Verdict: Allow} }

func deny(risk, reason string) Decision { return Decision{Verdict: Deny, Risk: risk, Reason: reason} }

// askRule is an Ask a remembered rule may answer.
func askRule(risk, reason string) Decision {
	return Decision{Verdict: Ask, Risk: risk, Reason: reason, RuleEligible: true}
}

// askAlways is an Ask only the person may answer.
func askAlways(risk, reason string) Decision {
	return Decision{Verdict: Ask, Risk: risk, Reason: reason}
}

// Decide decides on one call.
func Decide(in Input) Decision {
	mode := in.Mode
	switch mode {
	case "":
		mode = DefaultMode
	case ModeManual, ModeSmart, ModeOff:
	default:
		mode = ModeManual
	}
	it := in.Intent
	if it.Invalid {
		// The arguments do not parse: the tool refuses the call without
		// touching anything, and the model sees why.
		return allow()
	}
	switch it.Effect {
	case tool.EffectNone:
		return allow()
	case tool.EffectWrite:
		return decideWrite(mode, in.Workspace, it)
	case tool.EffectExec:
		return decideExec(mode, in.Workspace, it)
	case tool.EffectNetwork:
		return decideNetwork(mode, it)
	case tool.EffectMemory:
		if mode == ModeManual {
			return askRule(RiskSideEffect, "Changes the agent's notes or your profile")
		}
		return allow()
	case tool.EffectExternal:
		// Another program's tool (an MCP server's) may do anything: ask in
		// every mode, unless the person configured the server or the tool
		// to be allowed or denied; a remembered rule may answer an ask.
		switch it.Rule {
		case string(Allow):
			return allow()
		case string(Deny):
			return deny(RiskToolRule, "This tool is denied in its MCP server's settings")
		}
		return askRule(RiskSideEffect, "Runs a tool of another program")
	}
	// An effect this package does not know yet: ask rather than guess.
	name := in.Tool
	if name == "" {
		name = "a tool"
	}
	return askRule(RiskSideEffect, "Unknown kind of action by "+name)
}

func decideWrite(mode Mode, workspace string, it tool.Intent) Decision {
	if len(it.Paths) == 0 {
		// A write that does not say where cannot be checked.
		return askAlways(RiskOutsideWorkspace, "Changes files it does not name")
	}
	for _, p := range it.Paths {
		if escapes(workspace, p) {
			return deny(RiskOutsideWorkspace, "Writes outside the workspace ("+p+")")
		}
	}
	if mode == ModeManual {
		return askRule(RiskSideEffect, "Changes files in the workspace")
	}
	return allow()
}

func decideExec(mode Mode, workspace string, it tool.Intent) Decision {
	if strings.TrimSpace(it.Command) == "" {
		return askAlways(RiskUnparsed, "The command to run is unknown")
	}
	f := inspect(it.Command, workspace)
	switch f.risk {
	case RiskHardDeny:
		return deny(f.risk, f.reason)
	case RiskDangerous, RiskUnparsed:
		return askAlways(f.risk, f.reason)
	}
	switch mode {
	case ModeOff:
		return allow()
	case ModeSmart:
		if f.risk == RiskNetworkPrivate {
			return askRule(f.risk, f.reason)
		}
		return allow()
	}
	if f.risk == RiskNetworkPrivate {
		return askRule(f.risk, f.reason)
	}
	return askRule(RiskSideEffect, "Runs a command")
}

func decideNetwork(mode Mode, it tool.Intent) Decision {
	if mode == ModeOff {
		return allow()
	}
	host, ok := hostOf(it.URL)
	switch {
	case !ok:
		return askRule(RiskNetworkPrivate, "Fetches an address that could not be checked")
	case privateHost(host):
		// Server-side request forgery: the model reaching this machine's
		// own services (Caduceus's API among them) or cloud metadata.
		return askRule(RiskNetworkPrivate, "Fetches from this machine or the local network ("+host+")")
	case mode == ModeManual:
		return askRule(RiskSideEffect, "Fetches from the network ("+host+")")
	}
	return allow()
}
