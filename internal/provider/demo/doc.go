// Package demo is the offline demo model: a provider.Provider that needs no
// network and no API key, so Caduceus can be installed and explored before a
// real model is configured. It always reports Demo() == true so every surface
// can label its output as scripted.
//
// The demo plays a Script: scenarios picked by a substring of the last user
// message, each a sequence of turns made of steps (text, reasoning, tool
// calls, errors, delays, usage). Default returns the built-in script the
// product ships with. The script is injectable (New, ParseScript,
// LoadScript) because the same deterministic model is what tests of the
// agent loop, the runner, the API and the UI drive: a test can script any
// stream — interleaved tool calls, a mid-stream error, a slow delay to cancel
// — without a live model and without flakiness.
package demo
