package chat

import "errors"

var (
	// ErrSyntax wraps every error Parse reports for a malformed template.
	ErrSyntax = errors.New("chat: template syntax error")
	// ErrUnsafe marks an operation the sandbox refuses: loading other
	// templates, mutating lists and dicts, or setting attributes on
	// anything but a namespace (Hugging Face's immutable sandbox refuses
	// the same ones).
	ErrUnsafe = errors.New("chat: operation not allowed in a chat template")
	// ErrLimit marks a render stopped by a sandbox limit: too many loop
	// iterations, macros nested too deep, a range or string too large, or
	// too much memory allocated.
	ErrLimit = errors.New("chat: template exceeded a sandbox limit")
	// ErrOutputTooLarge is returned when the rendered prompt would exceed
	// Options.MaxOutput. It also matches ErrLimit.
	ErrOutputTooLarge = &limitError{"chat: rendered prompt exceeds the output limit"}
	// ErrTimeout is returned when a render runs past Options.Timeout. It
	// also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("chat: template render timed out")
)

// TemplateError is what a template's raise_exception(message) call
// becomes: templates use it to reject conversations they cannot format
// (roles that do not alternate, an unsupported role, ...).
type TemplateError struct {
	Message string
}

func (e *TemplateError) Error() string { return "chat: template raised an error: " + e.Message }

// limitError is a sentinel that also matches ErrLimit.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrLimit }
