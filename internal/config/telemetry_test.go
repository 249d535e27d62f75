package config

import (
	"strings"
	"testing"
)

func TestTelemetryFlags(t *testing.T) {
	ws := t.TempDir()
	cases := []struct {
		name    string
		cmd     string // serve or runner
		args    []string
		env     map[string]string
		want    Telemetry
		wantErr string
	}{
		{name: "defaults", cmd: "serve", want: Telemetry{LogFormat: LogText}},
		{name: "json from env", cmd: "serve", env: map[string]string{"CADUCEUS_LOG_FORMAT": "json"}, want: Telemetry{LogFormat: LogJSON}},
		{name: "flag beats env", cmd: "serve", env: map[string]string{"CADUCEUS_LOG_FORMAT": "json"}, args: []string{"--log-format", "text"}, want: Telemetry{LogFormat: LogText}},
		{name: "bad log format", cmd: "serve", args: []string{"--log-format", "xml"}, wantErr: "log-format must be text or json"},
		{name: "runner metrics address", cmd: "runner", args: []string{"--metrics-addr", "127.0.0.1:7421"},
			want: Telemetry{LogFormat: LogText, MetricsAddr: "127.0.0.1:7421"}},
		{name: "runner metrics address from env", cmd: "runner", env: map[string]string{"CADUCEUS_METRICS_ADDR": "127.0.0.1:9"},
			want: Telemetry{LogFormat: LogText, MetricsAddr: "127.0.0.1:9"}},
		{name: "serve has no metrics address", cmd: "serve", args: []string{"--metrics-addr", "127.0.0.1:7421"}, wantErr: "not defined"},
		{name: "traces endpoint", cmd: "serve", args: []string{"--otlp-endpoint", "http://otel:4318/v1/traces"},
			want: Telemetry{LogFormat: LogText, TracesEndpoint: "http://otel:4318/v1/traces"}},
		{name: "traces endpoint from the OTLP env", cmd: "runner", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel:4318/"},
			want: Telemetry{LogFormat: LogText, TracesEndpoint: "https://otel:4318/v1/traces"}},
		{name: "the traces env wins", cmd: "serve", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/t"},
			want: Telemetry{LogFormat: LogText, TracesEndpoint: "http://b:4318/t"}},
		{name: "sdk disabled", cmd: "serve", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_SDK_DISABLED": "true"},
			want: Telemetry{LogFormat: LogText}},
		{name: "no traces exporter", cmd: "serve", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_EXPORTER": "none"},
			want: Telemetry{LogFormat: LogText}},
		{name: "bad endpoint, not echoed", cmd: "serve", args: []string{"--otlp-endpoint", "otel:4318?secret=hunter2"}, wantErr: "otlp-endpoint must be an http"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parse := ParseServe
			if tc.cmd == "runner" {
				parse = ParseRunner
			}
			env := map[string]string{"HOME": "/h"}
			for k, v := range tc.env {
				env[k] = v
			}
			c, err := parse(append([]string{"--workspace", ws}, tc.args...), func(k string) string { return env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Telemetry != tc.want {
				t.Fatalf("got %+v, want %+v", c.Telemetry, tc.want)
			}
		})
	}
}
