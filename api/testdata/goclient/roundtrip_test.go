package heraldclient

// This file is copied beside the client that TestOpenAPIGoClient generates
// with oapi-codegen, with answers/ holding the admin API's push and app
// answers drawn from a live server, each named NN_what_Schema.json after the
// schema the document gives it. Each must decode into the generated type
// and re-encode unchanged: a member the client drops (a null it omits, a
// member it does not know) is data an app team's client loses.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestAnswersRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("answers", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no answers to decode (%v)", err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".json"), "_")
		var v any
		switch schema := parts[len(parts)-1]; schema {
		case "Push":
			v = new(Push)
		case "PushDetail":
			v = new(PushDetail)
		case "PushList":
			v = new(PushList)
		case "PushGroup":
			v = new(PushGroup)
		case "App":
			v = new(App)
		case "AppList":
			v = new(AppList)
		default:
			t.Fatalf("%s: no generated type for schema %s", f, schema)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Errorf("%s: the generated type does not decode it: %v", f, err)
			continue
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Errorf("%s: re-encoding: %v", f, err)
			continue
		}
		var want, got any
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &got); err != nil {
			t.Fatal(err)
		}
		for _, d := range diff("", want, got) {
			t.Errorf("%s: re-encoded by the generated client, %s", f, d)
		}
	}
}

// diff lists where got differs from want, by JSON path.
func diff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var out []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			seen := map[string]bool{}
			for k := range w {
				seen[k] = true
				if !yield(k) {
					return
				}
			}
			for k := range g {
				if !seen[k] && !yield(k) {
					return
				}
			}
		}) {
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case !inG:
				out = append(out, fmt.Sprintf("%s/%s: dropped (was %v)", path, k, wv))
			case !inW:
				out = append(out, fmt.Sprintf("%s/%s: added (%v)", path, k, gv))
			default:
				out = append(out, diff(path+"/"+k, wv, gv)...)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, diff(fmt.Sprintf("%s/%d", path, i), w[i], g[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
	}
	return nil
}
