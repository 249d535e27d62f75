package demo

import "encoding/json"

// streamDelayMS paces the default script's fragments so streaming is visible
// in the UI without making the demo tedious.
const streamDelayMS = 15

// Default returns the script played when no real provider is configured. It
// is a function rather than a variable so no caller can alter what every
// other caller gets.
//
// Each scenario shows one part of the product: a plain answer (the default,
// which also says how to leave demo mode), a tool call ("files"), a call
// that needs approval ("run"/"command") and a clarifying question
// ("ask"/"question"). The approval scenario must ask on default settings:
// the smart approval mode runs ordinary commands on its own, so it runs a
// recursive delete (see RunCommand).
func Default() Script {
	return Script{Scenarios: []Scenario{
		{Match: "files", Turns: filesTurns()},
		{Match: "run", Turns: runTurns()},
		{Match: "command", Turns: runTurns()},
		{Match: "ask", Turns: askTurns()},
		{Match: "question", Turns: askTurns()},
		{Match: "", Turns: []Turn{{Steps: []Step{
			reasoning("No scripted scenario matches this message, so I'll say I'm the offline demo model and explain how to connect a real one."),
			text(helpText),
		}}}},
	}}
}

// helpText is the answer to a message no scenario matches: it names every
// way to configure a real provider.
const helpText = "**This is the offline demo model.** Caduceus is running without a real language model, so my replies are scripted.\n\n" +
	"To connect a real provider, set one of these environment variables and restart Caduceus:\n\n" +
	"- `OPENAI_API_KEY` for OpenAI (with `OPENAI_BASE_URL` for another OpenAI-compatible server)\n" +
	"- `ANTHROPIC_API_KEY` for Anthropic\n" +
	"- `OLLAMA_HOST` for a local Ollama server (for example `127.0.0.1:11434`)\n\n" +
	"Or list providers and models in `config.json` in the data directory (`--config` names another file).\n\n" +
	"Meanwhile, try a message containing **files**, **run** or **ask** to see tool calls, approvals and questions."

// RunCommand is the command the approval scenario runs. Default settings
// (the smart approval mode) must ask about it, so it is a recursive delete,
// of a directory it has just created: harmless in any workspace, and mkdir
// without -p stops it when a directory of that name already exists.
const RunCommand = "mkdir caduceus-demo-scratch && rm -r caduceus-demo-scratch"

func filesTurns() []Turn {
	return []Turn{
		{Steps: []Step{
			reasoning("The person wants to see files; listing the workspace root is the safe first step."),
			text("Let me look at the workspace."),
			toolCall("list_dir", `{"path":"."}`),
		}},
		{Steps: []Step{
			text("Those are the files at the top of the workspace — the listing is shown above.\n\n" +
				"_I'm the offline demo model, so this summary is scripted; connect a real model to have the files actually read._"),
		}},
	}
}

func runTurns() []Turn {
	return []Turn{
		{Steps: []Step{
			reasoning("A recursive delete is the kind of command Caduceus asks about, so this shows an approval; the directory is one I create first."),
			text("I'll create a scratch directory in the workspace and delete it again with `rm -r`. " +
				"A recursive delete is risky, so Caduceus will ask you to approve it first."),
			toolCall("run_command", runArgs()),
		}},
		{Steps: []Step{
			text("Done — the command's result (or your decision, if you denied it) is shown above. " +
				"In the default `smart` approval mode Caduceus runs ordinary commands on its own and asks before risky ones like this one; " +
				"`--approval-mode manual` asks before every command.\n\n" +
				"_Offline demo model: this reply is scripted._"),
		}},
	}
}

func runArgs() string {
	b, err := json.Marshal(map[string]string{"command": RunCommand})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return string(b)
}

func askTurns() []Turn {
	return []Turn{
		{Steps: []Step{
			text("Quick question before I go on:"),
			toolCall("clarify", `{"question":"Which do you prefer?","choices":["Option A","Option B"]}`),
		}},
		{Steps: []Step{
			text("Thanks — got your answer; you can see it in the conversation above. " +
				"A real model would now carry on with your choice.\n\n" +
				"_Offline demo model: this reply is scripted._"),
		}},
	}
}

func text(s string) Step {
	return Step{Kind: KindText, Text: s, ChunkDelayMS: streamDelayMS}
}

func reasoning(s string) Step {
	return Step{Kind: KindReasoning, Text: s, ChunkDelayMS: streamDelayMS}
}

func toolCall(name, args string) Step {
	return Step{Kind: KindToolCall, Name: name, Args: json.RawMessage(args), ChunkDelayMS: streamDelayMS}
}
