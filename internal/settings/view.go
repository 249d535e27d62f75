package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// View is the settings as the API shows them.
type View struct {
	// Values are the stored values (absent: the default applies).
	Values map[string]json.RawMessage `json:"values"`
	// Fixed are the values the environment, the command line or the
	// config file set: read-only here, and in force.
	Fixed     map[string]Fixed `json:"fixed"`
	Defaults  Effective        `json:"defaults"`
	Effective Effective        `json:"effective"`
	Keys      []string         `json:"keys"`
}

// Settings returns the settings as last loaded.
func (s *Service) Settings() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := View{Values: map[string]json.RawMessage{}, Fixed: map[string]Fixed{}, Defaults: s.cfg.Defaults,
		Effective: s.effectiveLocked(), Keys: SettingKeys()}
	for k, raw := range s.settings {
		// Rows other packages keep here (web_search, with its sealed key)
		// are theirs to show.
		if _, ok := findDef(k); !ok {
			continue
		}
		v.Values[k] = json.RawMessage(raw)
	}
	for k, f := range s.cfg.Fixed {
		v.Fixed[k] = f
	}
	return v
}

// PatchSettings writes the given keys (a JSON null deletes one, so its
// default applies again), all or none, and reloads.
func (s *Service) PatchSettings(ctx context.Context, in map[string]json.RawMessage) (View, error) {
	if len(in) == 0 {
		return View{}, errorf(CodeInvalidInput, "", "send at least one setting")
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var scratch Effective
	for _, k := range keys {
		d, ok := findDef(k)
		if !ok {
			return View{}, errorf(CodeUnknownSetting, k, "no setting is named %q (settings: %s)", k, strings.Join(SettingKeys(), ", "))
		}
		if f, fixed := s.cfg.Fixed[k]; fixed {
			return View{}, errorf(CodeReadOnly, k, "%s is set by the %s and cannot be changed here", k, sourceName(f.Source))
		}
		if string(in[k]) == "null" {
			continue
		}
		if err := d.set(in[k], &scratch, s); err != nil {
			return View{}, errorf(CodeInvalidSetting, k, "%s must be %s", k, err.Error())
		}
	}
	now := s.cfg.Now()
	err := s.cfg.Store.Write(ctx, func(tx store.Tx) error {
		for _, k := range keys {
			raw := in[k]
			if string(raw) == "null" {
				if err := tx.DeleteSetting(ctx, k); err != nil {
					return err
				}
				continue
			}
			canon, err := compact(raw)
			if err != nil {
				return err
			}
			if err := tx.PutSetting(ctx, store.Setting{Key: k, Value: canon, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return View{}, fmt.Errorf("save settings: %w", err)
	}
	if err := s.Reload(ctx); err != nil {
		return View{}, err
	}
	return s.Settings(), nil
}

func compact(raw json.RawMessage) (string, error) {
	var b strings.Builder
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", errors.New("setting value is not JSON")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	b.Write(out)
	return b.String(), nil
}

func sourceName(src string) string {
	switch src {
	case "env":
		return "environment"
	case "flag":
		return "command line"
	case "config":
		return "config file (config.json)"
	}
	return src
}
