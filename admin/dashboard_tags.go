package admin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
)

// The user page shows a user's tags as a form: a row per tag (its value
// and kind editable, a box to delete it) and a few empty rows to add new
// ones. Posted, the rows become the same update the admin API's PUT
// …/users/{userId}/tags takes, judged by the same rules.

// tagRow is one row of the tags form.
type tagRow struct {
	Name string
	// Kind is "string", "number" or "boolean".
	Kind  string
	Value string
	// Stored marks a tag the user has: its name is fixed and it can be
	// deleted.
	Stored bool
	Delete bool
}

// newTagRows is how many empty rows the form offers for new tags.
const newTagRows = 3

// tagKinds are the form's kinds, by the name it posts.
var tagKinds = map[string]audience.Kind{"string": audience.KindString, "number": audience.KindNumber, "boolean": audience.KindBool}

// tagRowsOf lists a user's tags by name, then the empty rows.
func tagRowsOf(tags audience.Tags) []tagRow {
	rows := make([]tagRow, 0, len(tags)+newTagRows)
	for name, v := range tags {
		kind := "string"
		for k, kv := range tagKinds {
			if kv == v.Kind {
				kind = k
			}
		}
		rows = append(rows, tagRow{Name: name, Kind: kind, Value: v.Text(), Stored: true})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	for range newTagRows {
		rows = append(rows, tagRow{Kind: "string"})
	}
	return rows
}

// tagRowsFrom reads the posted rows: tagName, tagKind and tagValue come in
// step, one of each per row; tagStored and tagDelete name the stored tags
// shown and those to delete.
func tagRowsFrom(f url.Values) []tagRow {
	names, kinds, values := f["tagName"], f["tagKind"], f["tagValue"]
	stored, del := map[string]bool{}, map[string]bool{}
	for _, n := range f["tagStored"] {
		stored[n] = true
	}
	for _, n := range f["tagDelete"] {
		del[n] = true
	}
	rows := make([]tagRow, len(names))
	for i, name := range names {
		name = strings.TrimSpace(name)
		rows[i] = tagRow{Name: name, Kind: "string", Stored: stored[name], Delete: del[name]}
		if i < len(kinds) {
			rows[i].Kind = kinds[i]
		}
		if i < len(values) {
			rows[i].Value = strings.ReplaceAll(values[i], "\r\n", "\n")
		}
	}
	return rows
}

// tagUpdate turns the rows into a tag update: each named row set to its
// value, or deleted. A row without a name and value is left out. The
// problems name tags.NAME as the admin API's do.
func tagUpdate(rows []tagRow) (map[string]*audience.Value, []herald.Detail) {
	set := map[string]*audience.Value{}
	var details []herald.Detail
	for _, row := range rows {
		switch {
		case row.Name == "" && row.Value == "":
			continue
		case row.Name == "":
			details = append(details, herald.Detail{Field: "tags", Reason: fmt.Sprintf("the value %q has no tag name", row.Value)})
			continue
		case !audience.ValidTagName(row.Name):
			details = append(details, herald.Detail{Field: "tags." + row.Name, Reason: audience.ReasonTagName})
			continue
		case named(set, row.Name):
			details = append(details, herald.Detail{Field: "tags." + row.Name, Reason: "is named twice"})
			continue
		}
		if row.Delete {
			set[row.Name] = nil
			continue
		}
		kind, ok := tagKinds[row.Kind]
		if !ok {
			details = append(details, herald.Detail{Field: "tags." + row.Name, Reason: "must be text, a number or true/false"})
			continue
		}
		v, reason := audience.ValueOf(kind, row.Value)
		if reason != "" {
			details = append(details, herald.Detail{Field: "tags." + row.Name, Reason: reason})
			continue
		}
		set[row.Name] = &v
	}
	return set, details
}

func named(set map[string]*audience.Value, name string) bool {
	_, ok := set[name]
	return ok
}

// setUserTags is the user page's tags form.
func (d *dashboard) setUserTags(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	userID := strings.TrimSpace(r.PostFormValue("userId"))
	rows := tagRowsFrom(r.PostForm)
	set, details := tagUpdate(rows)
	var err error
	if details != nil {
		err = herald.Invalid(details...)
	} else if len(set) == 0 {
		err = herald.Invalid(herald.Detail{Field: "tags", Reason: "name a tag to set, or tick one to delete"})
	} else {
		_, err = d.Store.SetTags(r.Context(), a.ID, userID, set)
	}
	if errors.Is(err, herald.ErrUserWithdrawn) {
		err = herald.ErrTagsWithdrawn
	}
	if err != nil {
		data := &userData{UserID: userID}
		if d.loadUser(r, a, data) == nil {
			data.Tags = rows
		}
		d.failOn(w, r, err, "user", viewOf("Users", a, data))
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(userID)
	d.done(w, r, appPath(a.ID, "users")+"?"+url.Values{"userId": {userID}}.Encode(),
		flash{AppID: a.ID, Notice: fmt.Sprintf("Tags of user %s saved.", userID)})
}
