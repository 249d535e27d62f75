package api

import "testing"

func TestValidJSONText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"plain", `{"a":"b"}`, true},
		{"pair", `{"a":"\ud83d\ude00"}`, true},
		{"pair, upper-case hex", `{"a":"\uD83D\uDE00"}`, true},
		{"escaped backslash before u", `{"a":"\\ud800"}`, true},
		{"escaped quote then surrogate", `{"a":"\"\ud800"}`, false},
		{"lone high", `{"a":"\ud800"}`, false},
		{"lone low", `{"a":"\udfff"}`, false},
		{"high then plain escape", `{"a":"\ud800\n"}`, false},
		{"high then short escape", `{"a":"\ud800\udc"}`, false},
		{"surrogate in a key", `{"\udc00":1}`, false},
		{"BMP escape", `{"a":"\u00e9\uffff\ud7ff\ue000"}`, true},
		{"outside a string", `{"a":1} \ud800`, true}, // malformed: the decoder refuses it
		{"truncated escape", `{"a":"\`, true},
		{"bad hex", `{"a":"\uzzzz"}`, true},
		{"invalid byte", "{\"a\":\"\xff\"}", false},
		{"overlong", "{\"a\":\"\xc1\xbf\"}", false},
		{"UTF-8 emoji", "{\"a\":\"\U0001F600\"}", true},
	}
	for _, tt := range tests {
		if got := validJSONText([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: validJSONText(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}
