package secret

import "strings"

// secretNameParts mark variables whose values are credentials by
// convention: OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
// DB_PASSWORD, SSH_AUTH_SOCK, ...
var secretNameParts = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
	"CREDENTIAL", "AUTH", "PRIVATE", "COOKIE", "DSN"}

// LooksSecret reports whether an environment variable's name says that
// its value is a credential. It errs towards yes: a variable wrongly taken
// for a secret is only withheld from commands (and can be set for them
// under another name), one wrongly taken for harmless hands a key to the
// model.
func LooksSecret(name string) bool {
	upper := strings.ToUpper(name)
	for _, part := range secretNameParts {
		if strings.Contains(upper, part) {
			return true
		}
	}
	// "PASS" alone would also match TOX_TESTENV_PASSENV and the like.
	return upper == "PASS" || strings.HasSuffix(upper, "_PASS")
}
