package control

// Profiles (issue 16, h16-profiles): several agents. A profile is
// configuration, not conversation: its changes are not journalled; each
// run's run.started keeps a snapshot of the profile it ran with instead.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Stable error codes of profiles.
const (
	CodeProfileNotFound     = "profile_not_found"
	CodeProfileNameTaken    = "profile_name_taken"
	CodeUnknownTool         = "unknown_tool"
	CodeInvalidColor        = "invalid_color"
	CodeInvalidApprovalMode = "invalid_approval_mode"
)

// Limits of a profile's fields.
const (
	MaxProfileNameRunes = 100
	MaxProfileFallbacks = 10
	// DefaultProfileColor is the colour of a profile created without one.
	DefaultProfileColor = "#6366f1"
)

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// KnowTools sets the tool names a profile may enable; a profile naming
// any other is refused. Call it before the Service serves requests. Until
// it is called every name is accepted.
func (s *Service) KnowTools(names []string) {
	s.toolNames = slices.Clone(names)
}

// ProfileInput is the input of CreateProfile and UpdateProfile; nil
// fields stay unchanged on update (and take their defaults on create).
// Model and Fallbacks are not checked against the configured providers:
// a profile may name a model of a provider added later. A run whose
// model no provider serves tries the fallbacks in order and fails
// model_unavailable when none is served.
type ProfileInput struct {
	Name         *string
	Color        *string
	Instructions *string
	Model        *string
	Fallbacks    *[]string
	Tools        *[]string
	ApprovalMode *string
	Workspace    *string
	Default      *bool
}

func (s *Service) applyProfile(p *store.Profile, in ProfileInput) error {
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		if n == "" || !utf8.ValidString(n) || strings.ContainsAny(n, "\x00\r\n") {
			return errorf(CodeInvalidInput, "a profile needs a name of one line")
		}
		if utf8.RuneCountInString(n) > MaxProfileNameRunes {
			return errorf(CodeInvalidInput, "profile name is longer than %d characters", MaxProfileNameRunes)
		}
		p.Name = n
	}
	if in.Color != nil {
		c := strings.TrimSpace(*in.Color)
		if !colorRE.MatchString(c) {
			return &Error{Code: CodeInvalidColor, Message: "a colour is #rrggbb", Details: map[string]any{"color": c}}
		}
		p.Color = strings.ToLower(c)
	}
	if in.Instructions != nil {
		if !utf8.ValidString(*in.Instructions) || strings.ContainsRune(*in.Instructions, 0) {
			return errorf(CodeInvalidInput, "instructions must be UTF-8 text")
		}
		if utf8.RuneCountInString(*in.Instructions) > MaxInstructionsRunes {
			return errorf(CodeInvalidInput, "instructions are longer than %d characters", MaxInstructionsRunes)
		}
		p.Instructions = strings.TrimSpace(*in.Instructions)
	}
	if in.Model != nil {
		m, err := modelRef(*in.Model)
		if err != nil {
			return err
		}
		p.Model = m
	}
	if in.Fallbacks != nil {
		if len(*in.Fallbacks) > MaxProfileFallbacks {
			return errorf(CodeInvalidInput, "a profile has at most %d fallback models", MaxProfileFallbacks)
		}
		var out []string
		for _, f := range *in.Fallbacks {
			m, err := modelRef(f)
			if err != nil {
				return err
			}
			if m == "" {
				return errorf(CodeInvalidInput, "a fallback model cannot be empty")
			}
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
		p.Fallbacks = out
	}
	if in.Tools != nil {
		var out []string
		for _, t := range *in.Tools {
			t = strings.TrimSpace(t)
			// MCP tools (mcp__<server>__<tool>, or mcp__<server> for all of
			// a server's) come and go with their servers' configuration:
			// taken as given.
			mcpName := strings.HasPrefix(t, "mcp__") && len(t) > len("mcp__")
			if t == "" || (s.toolNames != nil && !mcpName && !slices.Contains(s.toolNames, t)) {
				return &Error{Code: CodeUnknownTool, Message: fmt.Sprintf("no tool is called %q", t),
					Details: map[string]any{"tool": t, "tools": s.toolNames}}
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		p.Tools = out
	}
	if in.ApprovalMode != nil {
		m := strings.ToLower(strings.TrimSpace(*in.ApprovalMode))
		if m != "" {
			if _, err := policy.ParseMode(m); err != nil {
				return &Error{Code: CodeInvalidApprovalMode, Message: fmt.Sprintf("approval mode %q is not one of manual, smart, off (or empty for the server's)", m),
					Details: map[string]any{"approval_mode": m}}
			}
		}
		p.ApprovalMode = m
	}
	if in.Workspace != nil {
		ws := strings.TrimSpace(*in.Workspace)
		if ws != "" {
			var err error
			if ws, err = s.checkWorkspace(ws); err != nil {
				return err
			}
		}
		p.Workspace = ws
	}
	if in.Default != nil {
		p.Default = *in.Default
	}
	return nil
}

func modelRef(m string) (string, error) {
	m = strings.TrimSpace(m)
	if !utf8.ValidString(m) || strings.ContainsAny(m, "\x00\r\n\t ") || len(m) > 200 {
		return "", errorf(CodeInvalidInput, "a model is one word such as provider/model")
	}
	return m, nil
}

func profileNameTaken(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return &Error{Code: CodeProfileNameTaken, Message: "another profile has this name", Details: map[string]any{"name": name}}
	}
	return err
}

func profileNotFound(err error, profileID string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Code: CodeProfileNotFound, Message: "profile_id names no profile", Details: map[string]any{"profile_id": profileID}}
	}
	return err
}

// CreateProfile makes a profile.
func (s *Service) CreateProfile(ctx context.Context, in ProfileInput) (store.Profile, error) {
	if in.Name == nil {
		return store.Profile{}, errorf(CodeInvalidInput, "a profile needs a name of one line")
	}
	now := time.Now().UTC()
	p := store.Profile{ID: id.New("prf"), Color: DefaultProfileColor, CreatedAt: now, UpdatedAt: now}
	if err := s.applyProfile(&p, in); err != nil {
		return store.Profile{}, err
	}
	err := s.w.Do(ctx, func(tx store.Tx) error { return profileNameTaken(tx.InsertProfile(ctx, p), p.Name) })
	return p, err
}

// UpdateProfile changes a live profile; the next run of every session
// naming it uses the change.
func (s *Service) UpdateProfile(ctx context.Context, profileID string, in ProfileInput) (store.Profile, error) {
	var out store.Profile
	err := s.w.Do(ctx, func(tx store.Tx) error {
		p, err := liveProfile(ctx, tx, profileID)
		if err != nil {
			return err
		}
		if err := s.applyProfile(&p, in); err != nil {
			return err
		}
		p.UpdatedAt = time.Now().UTC()
		out = p
		return profileNameTaken(tx.UpdateProfile(ctx, p), p.Name)
	})
	return out, err
}

// DuplicateProfile copies a live profile under the first free name of
// "<name> (copy)", "<name> (copy 2)", ...; the copy is not the default.
func (s *Service) DuplicateProfile(ctx context.Context, profileID string) (store.Profile, error) {
	var out store.Profile
	err := s.w.Do(ctx, func(tx store.Tx) error {
		p, err := liveProfile(ctx, tx, profileID)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		p.ID, p.Default, p.CreatedAt, p.UpdatedAt = id.New("prf"), false, now, now
		base := p.Name
		for i := 1; ; i++ {
			suffix := " (copy)"
			if i > 1 {
				suffix = fmt.Sprintf(" (copy %d)", i)
			}
			p.Name = truncateRunes(base, MaxProfileNameRunes-utf8.RuneCountInString(suffix)) + suffix
			err := tx.InsertProfile(ctx, p)
			if !errors.Is(err, store.ErrConflict) || i >= 100 {
				out = p
				return profileNameTaken(err, p.Name)
			}
		}
	})
	return out, err
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// DeleteProfile marks a live profile deleted. Sessions and projects
// naming it keep the name; their runs go on without a profile.
func (s *Service) DeleteProfile(ctx context.Context, profileID string) error {
	return s.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteProfile(ctx, profileID, time.Now().UTC()) })
}

func liveProfile(ctx context.Context, r store.Reader, profileID string) (store.Profile, error) {
	p, err := r.GetProfile(ctx, profileID)
	if err == nil && !p.Live() {
		err = fmt.Errorf("profile %q was deleted: %w", profileID, store.ErrNotFound)
	}
	return p, err
}

// checkProfileRef refuses a profile_id that names no live profile ("" is
// none and always fine).
func checkProfileRef(ctx context.Context, r store.Reader, profileID string) error {
	if profileID == "" {
		return nil
	}
	if !id.Valid("prf", profileID) {
		return profileNotFound(store.ErrNotFound, profileID)
	}
	_, err := liveProfile(ctx, r, profileID)
	return profileNotFound(err, profileID)
}

// sessionProfile is the profile a new session takes: the one asked for,
// else its project's, else the default profile ("" when there is none).
func sessionProfile(ctx context.Context, r store.Reader, asked, projectID string) (store.Profile, error) {
	if asked == "" && projectID != "" {
		p, err := r.GetProject(ctx, projectID)
		if err != nil {
			return store.Profile{}, err
		}
		if p.ProfileID != "" {
			if pr, err := liveProfile(ctx, r, p.ProfileID); err == nil {
				return pr, nil
			}
		}
	}
	if asked != "" {
		if err := checkProfileRef(ctx, r, asked); err != nil {
			return store.Profile{}, err
		}
		return r.GetProfile(ctx, asked)
	}
	p, err := r.DefaultProfile(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return store.Profile{}, nil
	}
	return p, err
}
