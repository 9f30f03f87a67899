// Package enum holds what the String methods of the small integer
// enumerations (a download's status, how a snapshot was written, what an
// import did) share: a value's name, or its type and number when it has
// none, so that a bad value still prints as something a person can trace.
package enum

import "fmt"

// Integer is the underlying type of an enumeration.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Name returns names[v], or "typ(v)" (e.g. "WriteKind(7)") when v is
// negative or past the names. names is indexed by value: write it keyed
// by the constants, [...]string{Queued: "queued", …}, so that a new or
// reordered constant cannot shift the names.
func Name[T Integer](v T, typ string, names []string) string {
	if v >= 0 && int64(v) < int64(len(names)) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int64(v))
}
