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
// ("ask"/"question").
func Default() Script {
	return Script{Scenarios: []Scenario{
		{Match: "files", Turns: filesTurns()},
		{Match: "run", Turns: runTurns()},
		{Match: "command", Turns: runTurns()},
		{Match: "ask", Turns: askTurns()},
		{Match: "question", Turns: askTurns()},
		{Match: "", Turns: []Turn{{Steps: []Step{
			reasoning("No scripted scenario matches this message, so I'll say I'm the offline demo model and explain how to connect a real one."),
			text("**This is the offline demo model.** Caduceus is running without a real language model, so my replies are scripted.\n\n" +
				"To connect a real provider, set one of these environment variables and restart Caduceus:\n\n" +
				"- `OPENAI_API_KEY` for OpenAI\n" +
				"- `ANTHROPIC_API_KEY` for Anthropic\n\n" +
				"Meanwhile, try a message containing **files**, **run** or **ask** to see tool calls, approvals and questions."),
		}}}},
	}}
}

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
			reasoning("Running a command changes nothing here, but commands still need the person's approval."),
			text("I'll run `ls -la` in the workspace. Caduceus will ask you to approve it first."),
			toolCall("run_command", `{"command":"ls -la"}`),
		}},
		{Steps: []Step{
			text("Done — the command's output (or your decision, if you denied it) is shown above. " +
				"Commands always wait for your approval, so nothing runs behind your back.\n\n" +
				"_Offline demo model: this reply is scripted._"),
		}},
	}
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
