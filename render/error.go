package render

import (
	"fmt"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// SyntaxError is why Compile refused a text: the character (1-based, in
// Unicode code points) where the problem starts and the reason, which
// names that character and reads after the member's name in a 400 (see
// Check): "title: at character 7, {{name}} is not a placeholder: …".
type SyntaxError struct {
	Char   int
	Reason string
}

// Error returns the reason, marked as render's.
func (e *SyntaxError) Error() string { return "render: " + e.Reason }

// Reasons a member of a localized object is refused, worded as package
// request's readers word the same problems (render cannot import request).
const (
	reasonUnknownField = "unknown field"
	reasonRequired     = "is required"
	reasonNotString    = "must be a string"
	reasonEmpty        = "must not be empty"
	reasonNotObject    = "must be an object"
	reasonBadTag       = "must be a BCP 47 language tag, such as ko, ko-KR or zh-Hant-TW"
)

// syntaxError builds the error of a problem found at byte offset at of text.
func syntaxError(text string, at int, format string, args ...any) *SyntaxError {
	char := utf8.RuneCountInString(text[:at]) + 1
	return &SyntaxError{Char: char, Reason: fmt.Sprintf("at character %d, ", char) + fmt.Sprintf(format, args...)}
}

// detail names the member at path with reason.
func detail(path, reason string) herald.Detail {
	return herald.Detail{Field: path, Reason: reason}
}
