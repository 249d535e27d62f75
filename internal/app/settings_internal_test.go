package app

import (
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/settings"
)

func TestFixedSettings(t *testing.T) {
	cfg := config.Config{ApprovalMode: "manual", ApprovalTTL: 10 * time.Minute, RetryBackoff: 2 * time.Second}
	tests := []struct {
		name string
		env  map[string]string
		file models.File
		want map[string]settings.Fixed
	}{
		{"nothing set outside", nil, models.File{}, map[string]settings.Fixed{}},
		{"the environment", map[string]string{"CADUCEUS_APPROVAL_MODE": "Manual", "CADUCEUS_APPROVAL_TIMEOUT": "600s"}, models.File{},
			map[string]settings.Fixed{settings.KeyApprovalMode: {Value: "manual", Source: "env"}, settings.KeyApprovalTimeout: {Value: "10m0s", Source: "env"}}},
		// A flag beside the variable wins; the value in force is shown.
		{"a flag over the environment", map[string]string{"CADUCEUS_APPROVAL_MODE": "smart", "CADUCEUS_RETRY_BACKOFF": "5s"}, models.File{},
			map[string]settings.Fixed{settings.KeyApprovalMode: {Value: "manual", Source: "flag"}, settings.KeyRetryBackoff: {Value: "2s", Source: "flag"}}},
		{"config.json", nil, models.File{DefaultModel: "lab/qwen"}, map[string]settings.Fixed{settings.KeyDefaultModel: {Value: "lab/qwen", Source: "config"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fixedSettings(tc.file, func(k string) string { return tc.env[k] }, cfg)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s = %+v, want %+v", k, got[k], w)
				}
			}
		})
	}
}
