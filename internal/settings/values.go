package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/policy"
)

// Setting keys.
const (
	KeyDefaultModel    = "default_model"
	KeyApprovalMode    = "approval_mode"
	KeyApprovalTimeout = "approval_timeout"
	KeyMaxRetries      = "max_retries"
	KeyRetryBackoff    = "retry_backoff"
	KeyNotifications   = "notifications"
)

// Effective is what is in force: the fixed value, else the stored one,
// else the default.
type Effective struct {
	DefaultModel    string        `json:"default_model"`
	ApprovalMode    string        `json:"approval_mode"`
	ApprovalTimeout Duration      `json:"approval_timeout"`
	MaxRetries      int           `json:"max_retries"`
	RetryBackoff    Duration      `json:"retry_backoff"`
	Notifications   Notifications `json:"notifications"`
}

// Notifications says what the workbench notifies a person of.
type Notifications struct {
	Approvals bool `json:"approvals"`
	Questions bool `json:"questions"`
	RunFailed bool `json:"run_failed"`
	RunDone   bool `json:"run_done"`
}

// Duration is a time.Duration written as Go writes it ("90s", "0s").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf(`a duration such as "90s" or "5m"`)
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf(`a duration such as "90s" or "5m"`)
	}
	*d = Duration(v)
	return nil
}

// def is one setting: how to check a value and where it goes.
type def struct {
	key string
	// set decodes raw into e, or says what is wrong (never echoing the
	// value: a person may paste a key into the wrong field).
	set func(raw []byte, e *Effective, s *Service) error
}

func defs() []def {
	return []def{
		{KeyDefaultModel, func(raw []byte, e *Effective, s *Service) error {
			var v string
			if err := strictly(raw, &v); err != nil {
				return fmt.Errorf(`a model reference such as "provider/model"`)
			}
			v = strings.TrimSpace(v)
			if len(v) > 200 || strings.ContainsAny(v, " \t\n") {
				return fmt.Errorf(`a model reference such as "provider/model", without spaces, at most 200 characters`)
			}
			if name, _, ok := strings.Cut(v, "/"); ok && s != nil && s.cfg.Registry.Source(name) == "" {
				return fmt.Errorf("no provider is named %q", name)
			}
			e.DefaultModel = v
			return nil
		}},
		{KeyApprovalMode, func(raw []byte, e *Effective, _ *Service) error {
			var v string
			if err := strictly(raw, &v); err != nil {
				return fmt.Errorf("one of manual, smart, off")
			}
			m, err := policy.ParseMode(v)
			if err != nil || strings.TrimSpace(v) == "" {
				return fmt.Errorf("one of manual, smart, off")
			}
			e.ApprovalMode = string(m)
			return nil
		}},
		{KeyApprovalTimeout, func(raw []byte, e *Effective, _ *Service) error {
			var d Duration
			if err := strictly(raw, &d); err != nil || d < 0 || time.Duration(d) > 30*24*time.Hour {
				return fmt.Errorf(`a duration from "0s" (never) to "720h"`)
			}
			e.ApprovalTimeout = d
			return nil
		}},
		{KeyMaxRetries, func(raw []byte, e *Effective, _ *Service) error {
			var n int
			if err := strictly(raw, &n); err != nil || n < 0 || n > 100 {
				return fmt.Errorf("a whole number from 0 to 100")
			}
			e.MaxRetries = n
			return nil
		}},
		{KeyRetryBackoff, func(raw []byte, e *Effective, _ *Service) error {
			var d Duration
			if err := strictly(raw, &d); err != nil || d < 0 || time.Duration(d) > time.Hour {
				return fmt.Errorf(`a duration from "0s" to "1h"`)
			}
			e.RetryBackoff = d
			return nil
		}},
		{KeyNotifications, func(raw []byte, e *Effective, _ *Service) error {
			var n Notifications
			if err := strictly(raw, &n); err != nil {
				return fmt.Errorf("an object with the booleans approvals, questions, run_failed, run_done")
			}
			e.Notifications = n
			return nil
		}},
	}
}

// SettingKeys lists the setting keys, in the order they are shown.
func SettingKeys() []string {
	var ks []string
	for _, d := range defs() {
		ks = append(ks, d.key)
	}
	return ks
}

func findDef(key string) (def, bool) {
	i := slices.IndexFunc(defs(), func(d def) bool { return d.key == key })
	if i < 0 {
		return def{}, false
	}
	return defs()[i], true
}

// strictly decodes JSON refusing unknown fields.
func strictly(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// effectiveLocked applies stored values over the defaults and fixed ones
// over those. A stored value that no longer checks (a provider deleted
// since) is skipped with a log line.
func (s *Service) effectiveLocked() Effective {
	e := s.cfg.Defaults
	for _, d := range defs() {
		raw, ok := s.settings[d.key]
		if !ok {
			continue
		}
		if err := d.set([]byte(raw), &e, nil); err != nil {
			s.cfg.Log.Warn("a stored setting is not valid; using the default", "key", d.key, "want", err.Error())
		}
	}
	for key, f := range s.cfg.Fixed {
		d, ok := findDef(key)
		if !ok {
			continue
		}
		raw, err := json.Marshal(f.Value)
		if err == nil {
			err = d.set(raw, &e, nil)
		}
		if err != nil {
			s.cfg.Log.Warn("a fixed setting is not valid", "key", key, "err", err)
		}
	}
	return e
}
