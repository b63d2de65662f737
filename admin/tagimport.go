package admin

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

// A tag import is a CSV file streamed as the body of POST
// /admin/v1/apps/{appId}/tag-import: a header row `userId,NAME[:kind],…`
// (kind string, number or boolean; string when left out), then a row per
// user. A row's empty cell leaves that tag as it is; the others set it.
// Rows are applied in batches of tagImportBatch, each in a transaction of
// its own, as they are read: a body of any length is never held whole.

// tagImportBatch is how many rows one transaction applies.
const tagImportBatch = 1000

// maxImportRecord bounds one row of a tag import, in bytes.
const maxImportRecord = 64 << 10

// maxListedSkips bounds the skipped rows an answer lists; skippedCount
// counts them all.
const maxListedSkips = 1000

// importReadWindow is how long the import may wait for the next part of
// its body: the listener's read deadline is moved on by it after each
// batch, so a long file is bounded by its pace, not its length.
const importReadWindow = 30 * time.Second

// tagColumn is a column of the file after userId: the tag it sets.
type tagColumn struct {
	name string
	kind audience.Kind
}

// tagImportAnswer is the answer of an import that read its whole body.
type tagImportAnswer struct {
	Imported     int                `json:"imported"`
	Skipped      []audience.TagSkip `json:"skipped"`
	SkippedCount int                `json:"skippedCount"`
}

// tagImport is POST /admin/v1/apps/{appId}/tag-import.
func (s *server) tagImport(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/csv" {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "Content-Type", Reason: "must be text/csv: a header row userId,NAME[:string|number|boolean],… then a row per user"}))
		return
	}
	rc := http.NewResponseController(w)
	in := csv.NewReader(bufio.NewReaderSize(&recordLimit{r: r.Body}, 64<<10))
	in.ReuseRecord = true
	last := 1 // the line of the last row read
	header, err := in.Read()
	if err != nil {
		web.Error(w, r, importProblem(err, 1, "header"))
		return
	}
	cols, details := tagColumns(header)
	if details != nil {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	note := access.NoteOf(r.Context())
	out := tagImportAnswer{Skipped: []audience.TagSkip{}}
	batch := make([]audience.TagRow, 0, tagImportBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		skipped, err := s.Store.ImportTags(r.Context(), a.ID, batch)
		if err != nil {
			return err
		}
		for _, row := range batch {
			note.ShowedUsers(row.UserID)
		}
		out.Imported += len(batch) - len(skipped)
		out.SkippedCount += len(skipped)
		out.Skipped = append(out.Skipped, skipped[:min(len(skipped), maxListedSkips-len(out.Skipped))]...)
		batch = batch[:0]
		rc.SetReadDeadline(time.Now().Add(importReadWindow)) // not every listener has one to move
		return nil
	}
	for {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var row audience.TagRow
		if err == nil {
			last, _ = in.FieldPos(0)
			var d []herald.Detail
			if row, d = tagRowOf(rec, cols, last); d != nil {
				err = herald.Invalid(d...)
			}
		}
		if err != nil {
			web.Error(w, r, importStopped(importProblem(err, last+1, "row"), out, len(batch)))
			return
		}
		if batch = append(batch, row); len(batch) == tagImportBatch {
			if err := flush(); err != nil {
				web.Error(w, r, importStopped(err, out, 0))
				return
			}
		}
	}
	if err := flush(); err != nil {
		web.Error(w, r, importStopped(err, out, 0))
		return
	}
	web.JSON(w, http.StatusOK, out)
}

// tagColumns reads the header row: userId, then a tag name a column, each
// once, with an optional :kind.
func tagColumns(header []string) ([]tagColumn, []herald.Detail) {
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff") // a BOM, as spreadsheets write
	}
	if len(header) < 2 || strings.TrimSpace(header[0]) != "userId" {
		return nil, []herald.Detail{{Field: "header", Reason: "must be userId, then a column for each tag: userId,plan,points:number"}}
	}
	var cols []tagColumn
	var details []herald.Detail
	seen := map[string]bool{}
	for i, h := range header[1:] {
		field := fmt.Sprintf("header.column %d", i+2)
		name, kindName, typed := strings.Cut(strings.TrimSpace(h), ":")
		kind, ok := tagKinds[kindName]
		switch {
		case !audience.ValidTagName(name):
			details = append(details, herald.Detail{Field: field, Reason: audience.ReasonTagName})
		case typed && !ok:
			details = append(details, herald.Detail{Field: field, Reason: "a tag's kind must be string, number or boolean (NAME:number)"})
		case seen[name]:
			details = append(details, herald.Detail{Field: field, Reason: fmt.Sprintf("the tag %s has another column", name)})
		}
		if !typed {
			kind = audience.KindString
		}
		seen[name] = true
		cols = append(cols, tagColumn{name: name, kind: kind})
	}
	return cols, details
}

// tagRowOf reads a row of the file at line: its user and the tags its
// cells set.
func tagRowOf(rec []string, cols []tagColumn, line int) (audience.TagRow, []herald.Detail) {
	at := fmt.Sprintf("line %d", line)
	userID := strings.TrimSpace(rec[0])
	switch {
	case userID == "":
		return audience.TagRow{}, []herald.Detail{{Field: at + ".userId", Reason: "is required"}}
	case !utf8.ValidString(userID) || utf8.RuneCountInString(userID) > herald.MaxUserIDLen:
		return audience.TagRow{}, []herald.Detail{{Field: at + ".userId", Reason: fmt.Sprintf("must be UTF-8 text of at most %d characters", herald.MaxUserIDLen)}}
	}
	row := audience.TagRow{Line: line, UserID: userID, Set: map[string]*audience.Value{}}
	var details []herald.Detail
	for i, cell := range rec[1:] {
		if cell == "" {
			continue
		}
		v, reason := audience.ValueOf(cols[i].kind, cell)
		if reason != "" {
			details = append(details, herald.Detail{Field: at + "." + cols[i].name, Reason: reason})
			continue
		}
		row.Set[cols[i].name] = &v
	}
	return row, details
}

// importProblem names where a read of the file failed: a row of the wrong
// length, a quote out of place, a row too long.
func importProblem(err error, line int, what string) error {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount):
		return herald.Invalid(herald.Detail{Field: fmt.Sprintf("line %d", pe.Line), Reason: "must have a cell for each column of the header"})
	case errors.As(err, &pe):
		return herald.Invalid(herald.Detail{Field: fmt.Sprintf("line %d", pe.Line), Reason: fmt.Sprintf("is not CSV: %v (column %d)", pe.Err, pe.Column)})
	case errors.Is(err, errRecordTooLong):
		return herald.Invalid(herald.Detail{Field: fmt.Sprintf("line %d", line), Reason: fmt.Sprintf("a %s must be at most %d bytes", what, maxImportRecord)})
	case errors.Is(err, io.EOF):
		return herald.Invalid(herald.Detail{Field: "header", Reason: "is missing: the body is empty"})
	}
	var he *herald.Error
	if errors.As(err, &he) {
		return err
	}
	return herald.Invalid(herald.Detail{Field: "body", Reason: "could not be read"})
}

// importStopped adds to the refusal of an import stopped part way what it
// had done: the rows of the batches written before stay written; the rows
// read since (pending of them) were not.
func importStopped(err error, done tagImportAnswer, pending int) error {
	var he *herald.Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
		return err
	}
	e := *he
	e.Details = append(slices.Clone(he.Details), herald.Detail{Field: "imported",
		Reason: fmt.Sprintf("%d rows before it were imported and %d skipped, in batches of %d; the %d rows read since the last batch and the rest of the file were not",
			done.Imported, done.SkippedCount, tagImportBatch, pending)})
	return &e
}

// errRecordTooLong stops a file one of whose lines is over maxImportRecord.
var errRecordTooLong = errors.New("admin: an import row is too long")

// recordLimit passes a body on, failing when a line runs past
// maxImportRecord bytes without a line break: a file of any length, but
// no row the reader must hold that is larger than that.
type recordLimit struct {
	r   io.Reader
	run int // bytes since the last line break
}

func (l *recordLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.run = 0
		} else if l.run++; l.run > maxImportRecord {
			return 0, errRecordTooLong
		}
	}
	return n, err
}
