package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

// tagImportBatch is how many rows of a tag import one transaction
// applies.
const tagImportBatch = 1000

// maxTagImportSkips bounds the skipped rows an answer lists;
// skippedCount counts them all.
const maxTagImportSkips = 1000

// tagImport is POST /admin/v1/apps/{appId}/tag-import: a CSV file of
// users' tags (audience.TagReader), read as it arrives and applied in
// batches of tagImportBatch rows, each in a transaction of its own, so
// that a file of any length takes the memory of one batch. Each batch
// moves the request's deadline on (web.Extend): the deadline bounds a
// batch, not the file. A malformed row stops the import there with 400
// naming its line; the batches before it stay imported, its own is not.
func (s *server) tagImport(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	if err := csvContentType(r); err != nil {
		web.Error(w, r, err)
		return
	}
	ctx := r.Context()
	web.Extend(ctx, w, web.RequestDeadline)
	tr, err := audience.NewTagReader(r.Body)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	im := tagImporter{store: s.Store, appID: a.ID, note: access.NoteOf(ctx), answer: tagImportAnswer{Skipped: []audience.TagImportSkip{}}}
	batch := make([]audience.TagImportRow, 0, tagImportBatch)
	for {
		row, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			web.Error(w, r, im.refused(err, batch))
			return
		}
		if batch = append(batch, row); len(batch) == tagImportBatch {
			if err := im.apply(ctx, batch); err != nil {
				web.Error(w, r, err)
				return
			}
			batch = batch[:0]
			web.Extend(ctx, w, web.RequestDeadline)
		}
	}
	if err := im.apply(ctx, batch); err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, im.answer)
}

// csvContentType refuses a body that is not declared text/csv (UTF-8, or
// no charset), as the Server API refuses one not JSON.
func csvContentType(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if cs := params["charset"]; err != nil || mt != "text/csv" || cs != "" && !strings.EqualFold(cs, "utf-8") {
		return herald.Invalid(herald.Detail{Field: "Content-Type", Reason: "must be text/csv (UTF-8)"})
	}
	return nil
}

// tagImportAnswer is the answer of a tag import.
type tagImportAnswer struct {
	Imported     int                      `json:"imported"`
	Skipped      []audience.TagImportSkip `json:"skipped"`
	SkippedCount int                      `json:"skippedCount"`
}

// tagImporter applies a tag import's batches and keeps their totals.
type tagImporter struct {
	store  audience.Store
	appID  string
	note   *access.Note
	rows   int // rows of the batches applied
	answer tagImportAnswer
}

// apply applies one batch (nothing when it is empty).
func (im *tagImporter) apply(ctx context.Context, batch []audience.TagImportRow) error {
	if len(batch) == 0 {
		return nil
	}
	n, skipped, err := im.store.ImportTags(ctx, im.appID, batch)
	if err != nil {
		return err
	}
	for _, row := range batch {
		im.note.ShowedUsers(row.UserID)
	}
	im.rows += len(batch)
	im.answer.Imported += n
	im.answer.SkippedCount += len(skipped)
	room := maxTagImportSkips - len(im.answer.Skipped)
	im.answer.Skipped = append(im.answer.Skipped, skipped[:min(room, len(skipped))]...)
	return nil
}

// refused is a malformed row's refusal, saying what of the file was
// imported before it: the batches applied stay, the rows read of the
// failing one (batch) are not written.
func (im *tagImporter) refused(err error, batch []audience.TagImportRow) error {
	he := herald.AsError(err)
	if he == nil {
		return err
	}
	details := append([]herald.Detail(nil), he.Details...)
	from := "the line named"
	if len(batch) > 0 {
		from = fmt.Sprintf("line %d", batch[0].Line)
	}
	done := "nothing was imported"
	if im.rows > 0 {
		done = fmt.Sprintf("the %d rows before %s were imported in earlier batches (%d imported, %d skipped) and stay", im.rows, from,
			im.answer.Imported, im.answer.SkippedCount)
	}
	details = append(details, herald.Detail{Field: "body",
		Reason: fmt.Sprintf("the import stopped here: the rows from %s on were not written; %s", from, done)})
	return herald.Invalid(details...)
}
