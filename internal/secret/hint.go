package secret

import "unicode/utf8"

// hintMin is the shortest key Hint shows anything of: below it, seven
// characters would give away too much of the key.
const hintMin = 12

// Hint is the masked form a key is shown in, so that a person can tell
// keys apart without any response holding one: the first 3 and last 4
// characters ("sk-…4f2a"), or "" for keys shorter than 12 characters.
func Hint(key string) string {
	if utf8.RuneCountInString(key) < hintMin {
		return ""
	}
	r := []rune(key)
	return string(r[:3]) + "…" + string(r[len(r)-4:])
}
