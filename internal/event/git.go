package event

// GitCommittedPayload is the payload of git.committed: a person committed
// the staged changes of the session's workspace through the Git panel.
type GitCommittedPayload struct {
	Hash string `json:"hash"`
	// Message is the commit message's first line.
	Message string `json:"message"`
	Branch  string `json:"branch,omitempty"` // "" when HEAD is detached
	By      *Actor `json:"by,omitempty"`
}
