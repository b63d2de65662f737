package postgres

import (
	"strconv"
	"strings"
	"sync"
)

// rebinder turns the shared SQL's placeholders into PostgreSQL's: each `?`
// becomes the next `$n`, a numbered `?NNN` becomes `$NNN`. Quoted strings,
// quoted identifiers and comments are left as they are. The shared SQL is
// a bounded set of statements (IN lists of up to 500 placeholders among
// them), so each is rebound once and remembered.
type rebinder struct {
	cache sync.Map // query → rebound query
}

func (r *rebinder) rebind(query string) string {
	if v, ok := r.cache.Load(query); ok {
		return v.(string)
	}
	out := rebind(query)
	r.cache.Store(query, out)
	return out
}

// rebind returns query with PostgreSQL's placeholders.
func rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	next := 1
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end - 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i - 2
			} else {
				end += 2
			}
			b.WriteString(query[i : i+2+end])
			i += 2 + end - 1
		case c == '?':
			j := i + 1
			for j < len(query) && '0' <= query[j] && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
			} else {
				b.WriteString(strconv.Itoa(next))
				next++
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closing returns the index just past the quote that closes a quoted
// string or identifier opened before from; a doubled quote is an escaped
// one.
func closing(s string, from int, quote byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == quote {
			if i+1 < len(s) && s[i+1] == quote {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}
