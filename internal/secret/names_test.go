package secret

import "testing"

func TestLooksSecret(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"CADUCEUS_TOKEN", true},
		{"OPENAI_API_KEY", true},
		{"ANTHROPIC_API_KEY", true},
		{"GITHUB_TOKEN", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"aws_session_token", true},
		{"DB_PASSWORD", true},
		{"MYSQL_PWD_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"SMTP_PASS", true},
		{"PASS", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"SSH_AUTH_SOCK", true},
		{"NPM_CONFIG__AUTH", true},
		{"SIGNING_PRIVATE_PEM", true},
		{"SESSION_COOKIE", true},
		{"SENTRY_DSN", true},
		{"PATH", false},
		{"HOME", false},
		{"LANG", false},
		{"OPENAI_BASE_URL", false},
		{"OLLAMA_HOST", false},
		{"TOX_TESTENV_PASSENV", false},
		{"SSL_CERT_FILE", false},
	} {
		if got := LooksSecret(c.name); got != c.want {
			t.Errorf("LooksSecret(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
