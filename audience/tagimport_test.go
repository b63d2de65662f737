package audience

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestTagReader: rows are read with their line (blank lines and quoted
// line breaks counted), cells by their column's kind, empty cells left
// out; each refusal names where it is.
func TestTagReader(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tr, err := NewTagReader(strings.NewReader("userId,plan,n:number,b:boolean,s:string\n\nu1,gold,1.5,false,\"two\nlines\"\nu2,,,,\n"))
		if err != nil {
			t.Fatal(err)
		}
		r1, err := tr.Next()
		if err != nil || r1.Line != 3 || r1.UserID != "u1" || len(r1.Set) != 4 || !r1.Set["n"].Equal(Number(1.5)) ||
			!r1.Set["b"].Equal(Bool(false)) || !r1.Set["s"].Equal(String("two\nlines")) {
			t.Errorf("row 1: got %+v, %v", r1, err)
		}
		r2, err := tr.Next()
		if err != nil || r2.Line != 5 || r2.UserID != "u2" || len(r2.Set) != 0 {
			t.Errorf("row 2: got %+v, %v, want line 5 setting nothing", r2, err)
		}
		if _, err := tr.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("after the last row: got %v, want io.EOF", err)
		}
	})
	for _, tc := range []struct{ name, file, field string }{
		{"HeaderKind", "userId,a:bool\n", "header.column 2"},
		{"HeaderDuplicate", "userId,a,b,a:number\n", "header.column 4"},
		{"FieldCount", "userId,a\nu1,x,y\n", "line 2"},
		{"Value", "userId,a:number\nu1,x\n", "line 2.a"},
		{"UserControl", "userId,a\n\"u\x01\",x\n", "line 2.userId"},
		{"UserTooLong", "userId,a\n" + strings.Repeat("u", herald.MaxUserIDLen+1) + ",x\n", "line 2.userId"},
		{"Record", "userId,a\nu1,x\nu2," + strings.Repeat("y", MaxTagRecord) + "\n", "line 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewTagReader(strings.NewReader(tc.file))
			for err == nil {
				_, err = tr.Next()
			}
			he := herald.AsError(err)
			if he == nil || len(he.Details) == 0 || he.Details[0].Field != tc.field {
				t.Errorf("got %v, want a refusal naming %s", err, tc.field)
			}
		})
	}
}
