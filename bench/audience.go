package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/client"
)

// The tags of the segment and template modes: every user has three,
// imported through the admin API's CSV tag import before the timing.
func planOf(i int) string   { return [...]string{"gold", "silver"}[i%2] }
func levelOf(i int) int     { return i%10 + 1 }
func cityOf(i int) string   { return "Seoul-" + strconv.Itoa(i%25) }
func localeOf(i int) string { return [...]string{"ko-KR", "ja-JP", "en-US"}[i%3] }

// segmentFilter is the segment mode's three-leaf filter: every user holds
// it, so the push reaches as many devices as an all-users push, each
// selected by the filter in SQL.
const segmentFilter = `{"and":[{"tag":"plan","in":["gold","silver"]},{"tag":"level","gte":1},{"tag":"city","prefix":"Seoul"}]}`

// The template mode's push: the title and content are templates, with a
// Korean and a Japanese entry; en-US devices get the default.
const (
	templateTitle   = "Hello {{userId}}"
	templateContent = `Your {{tag.plan | "free"}} plan, level {{tag.level}}, in {{tag.city}}.`
)

var templateLocalized = map[string]client.Text{
	"ko": {Title: "{{userId}}님 안녕하세요", Content: `{{tag.city}}의 {{tag.plan | "무료"}} 요금제, 레벨 {{tag.level}}.`},
	"ja": {Title: "{{userId}}さん、こんにちは", Content: `{{tag.city}}の{{tag.plan | "無料"}}プラン、レベル{{tag.level}}。`},
}

// templateOf is the title and content user i's device gets in template
// mode, rendered by hand.
func templateOf(i int) (title, content string) {
	r := strings.NewReplacer("{{userId}}", userOf(i),
		`{{tag.plan | "free"}}`, planOf(i), `{{tag.plan | "무료"}}`, planOf(i), `{{tag.plan | "無料"}}`, planOf(i),
		"{{tag.level}}", strconv.Itoa(levelOf(i)), "{{tag.city}}", cityOf(i))
	switch localeOf(i) {
	case "ko-KR":
		return r.Replace(templateLocalized["ko"].Title), r.Replace(templateLocalized["ko"].Content)
	case "ja-JP":
		return r.Replace(templateLocalized["ja"].Title), r.Replace(templateLocalized["ja"].Content)
	}
	return r.Replace(templateTitle), r.Replace(templateContent)
}

// importTags gives every user its three tags in one streamed CSV upload
// (POST /admin/v1/apps/{appId}/tag-import) and checks that every row was
// imported.
func importTags(ctx context.Context, srv Server, appID string, users int) (TagImport, error) {
	pr, pw := io.Pipe()
	go func() {
		w := csv.NewWriter(pw)
		w.Write([]string{"userId", "plan", "level:number", "city"})
		for i := range users {
			w.Write([]string{userOf(i), planOf(i), strconv.Itoa(levelOf(i)), cityOf(i)})
		}
		w.Flush()
		pw.CloseWithError(w.Error())
	}()
	defer pr.Close()
	// The import may take minutes: the run's context bounds it, not a
	// client timeout.
	admin := adminClient{base: srv.AdminURL, token: srv.AdminToken, hc: &http.Client{}}
	var out struct {
		Imported     int `json:"imported"`
		SkippedCount int `json:"skippedCount"`
	}
	start := time.Now()
	err := admin.send(ctx, http.MethodPost, "/admin/v1/apps/"+appID+"/tag-import", "text/csv", pr, http.StatusOK, &out)
	elapsed := time.Since(start)
	res := TagImport{Rows: out.Imported, Seconds: elapsed.Seconds(), PerSecond: float64(out.Imported) / elapsed.Seconds()}
	if err != nil {
		return res, err
	}
	if out.Imported != users || out.SkippedCount != 0 {
		return res, fmt.Errorf("bench: tag import: %d rows imported and %d skipped, want %d and 0", out.Imported, out.SkippedCount, users)
	}
	return res, nil
}
