package audience

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// A tag import is a CSV file (RFC 4180) of users' tags: a header row
// `userId,NAME[:kind],...` naming the tag of each column and its kind
// (string when left out, else string, number or boolean), then one row a
// user. An empty cell leaves that tag as it is; there is no way to delete
// a tag from a file (an empty string cannot be set either). Rows are read
// one at a time (TagReader), so a file of any length takes the memory of
// one row.

// MaxTagRecord bounds one record of a tag import, in bytes: a header or
// row longer than this is refused. A record of MaxTags columns, each a
// value of MaxTagValue four-byte characters quoted, fits.
const MaxTagRecord = 256 << 10

// SkipTooManyTags is why a tag import skips a row that would leave its
// user more than MaxTags tags.
var SkipTooManyTags = fmt.Sprintf("would leave the user more than %d tags", MaxTags)

// TagImportRow is one data row of a tag import: the file line it starts
// on, its user and the tags it sets (never nil values: a file deletes no
// tag).
type TagImportRow struct {
	Line   int
	UserID string
	Set    map[string]*Value
}

// TagImportSkip is a row a tag import left alone, and why: its user is
// unknown or withdrawn (herald.SkipUnknownUser, herald.SkipWithdrawnUser),
// or the row would leave them too many tags (SkipTooManyTags).
type TagImportSkip struct {
	UserID string `json:"userId"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// tagColumn is a column of a tag import after userId.
type tagColumn struct {
	name string
	kind Kind
}

// TagReader reads a tag import's rows from a stream, one at a time.
type TagReader struct {
	r    *csv.Reader
	in   *recordBound
	cols []tagColumn
	line int // the line the last record read starts on
}

// NewTagReader reads the header of a tag import from r. A bad header is
// an invalid request naming its column (header.column 3), with nothing
// read past it.
func NewTagReader(r io.Reader) (*TagReader, error) {
	in := &recordBound{r: r}
	cr := csv.NewReader(in)
	cr.ReuseRecord = true
	t := &TagReader{r: cr, in: in}
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: "must start with a header row: userId,NAME[:string|number|boolean],..."})
	case err != nil:
		return nil, t.readError(err, "header")
	}
	cols, details := parseTagHeader(header)
	if details != nil {
		return nil, herald.Invalid(details...)
	}
	t.cols, t.line = cols, 1
	cr.FieldsPerRecord = len(header)
	in.mark = cr.InputOffset()
	return t, nil
}

// parseTagHeader reads the header's columns after userId; each refused
// column gives a detail naming it.
func parseTagHeader(header []string) ([]tagColumn, []herald.Detail) {
	field := func(i int) string { return "header.column " + strconv.Itoa(i+1) }
	header[0] = strings.TrimPrefix(header[0], "\uFEFF") // the byte-order mark spreadsheets write; csv gives at least one field
	if header[0] != "userId" {
		return nil, []herald.Detail{{Field: field(0), Reason: fmt.Sprintf("must be userId, is %q", header[0])}}
	}
	switch {
	case len(header) == 1:
		return nil, []herald.Detail{{Field: "header", Reason: "must name at least one tag column after userId"}}
	case len(header)-1 > MaxTags:
		return nil, []herald.Detail{{Field: "header", Reason: fmt.Sprintf("must name at most %d tag columns, names %d", MaxTags, len(header)-1)}}
	}
	cols := make([]tagColumn, 0, len(header)-1)
	seen := map[string]int{}
	var details []herald.Detail
	for i, text := range header[1:] {
		i++
		name, kindText, hasKind := strings.Cut(text, ":")
		col := tagColumn{name: name, kind: KindString}
		switch {
		case !ValidTagName(name):
			details = append(details, herald.Detail{Field: field(i), Reason: fmt.Sprintf("%q: tag %s", name, ReasonTagName)})
			continue
		case hasKind:
			k, ok := kindNames[kindText]
			if !ok {
				details = append(details, herald.Detail{Field: field(i), Reason: fmt.Sprintf("%q: the kind after : must be string, number or boolean", text)})
				continue
			}
			col.kind = k
		}
		if j, dup := seen[name]; dup {
			details = append(details, herald.Detail{Field: field(i), Reason: fmt.Sprintf("names tag %q again (column %d)", name, j+1)})
			continue
		}
		seen[name] = i
		cols = append(cols, col)
	}
	return cols, details
}

// kindNames are the kinds a header column may name.
var kindNames = map[string]Kind{"string": KindString, "number": KindNumber, "boolean": KindBool}

// Next reads the next row; io.EOF after the last. A malformed row (a CSV
// error, a count of fields other than the header's, a bad userId or a
// value its column's kind refuses) is an invalid request naming its line
// and column (line 17.points), one detail for each bad cell.
func (t *TagReader) Next() (TagImportRow, error) {
	rec, err := t.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return TagImportRow{}, io.EOF
		}
		return TagImportRow{}, t.readError(err, "")
	}
	start := t.in.mark
	t.in.mark = t.r.InputOffset()
	line, _ := t.r.FieldPos(0)
	if t.in.mark-start > MaxTagRecord { // recordBound stops the read only past its read-ahead
		return TagImportRow{}, t.readError(errRecordTooLong, "")
	}
	t.line = line
	at := "line " + strconv.Itoa(line)
	row := TagImportRow{Line: line, UserID: rec[0], Set: map[string]*Value{}}
	var details []herald.Detail
	if reason := userIDReason(rec[0]); reason != "" {
		details = append(details, herald.Detail{Field: at + ".userId", Reason: reason})
	}
	for i, col := range t.cols {
		cell := rec[i+1]
		if cell == "" {
			continue // left as it is
		}
		v, reason := ValueOf(col.kind, cell)
		if reason != "" {
			details = append(details, herald.Detail{Field: at + "." + col.name, Reason: reason})
			continue
		}
		row.Set[col.name] = &v
	}
	if details != nil {
		return TagImportRow{}, herald.Invalid(details...)
	}
	return row, nil
}

// readError is a CSV error as an invalid request naming its line (where
// the header was meant, for the header).
func (t *TagReader) readError(err error, where string) error {
	if errors.Is(err, errRecordTooLong) {
		if where == "" {
			where = "line " + strconv.Itoa(t.line+1) // the record after the last one read
		}
		return herald.Invalid(herald.Detail{Field: where, Reason: fmt.Sprintf("must be at most %d KiB", MaxTagRecord>>10)})
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return herald.Invalid(herald.Detail{Field: "body", Reason: "could not be read"})
	}
	if where == "" {
		where = "line " + strconv.Itoa(pe.StartLine)
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return herald.Invalid(herald.Detail{Field: where, Reason: fmt.Sprintf("must have %d fields as the header has", t.r.FieldsPerRecord)})
	}
	return herald.Invalid(herald.Detail{Field: where, Reason: fmt.Sprintf("is not CSV: %v (line %d, column %d)", pe.Err, pe.Line, pe.Column)})
}

// userIDReason says why a cell cannot be a userId, "" when it can.
func userIDReason(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is required"
	case !utf8.ValidString(s):
		return herald.ReasonInvalidUTF8
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "must not contain control characters"
	case utf8.RuneCountInString(s) > herald.MaxUserIDLen:
		return fmt.Sprintf("must be at most %d characters", herald.MaxUserIDLen)
	}
	return ""
}

// errRecordTooLong is recordBound's refusal of a record past MaxTagRecord.
var errRecordTooLong = errors.New("audience: record too long")

// csvReadAhead is how far past the record it returns encoding/csv may
// have read (the buffer of its bufio.Reader).
const csvReadAhead = 4096

// recordBound passes a stream through, failing once the record being
// read (the bytes past mark, the offset where it starts) holds more than
// MaxTagRecord: encoding/csv would otherwise gather a record of any
// length in memory.
type recordBound struct {
	r          io.Reader
	read, mark int64
}

func (b *recordBound) Read(p []byte) (int, error) {
	room := MaxTagRecord + csvReadAhead - (b.read - b.mark)
	if room <= 0 {
		return 0, errRecordTooLong
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}
