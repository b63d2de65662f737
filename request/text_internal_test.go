package request

import "testing"

func TestValidJSONString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want bool
	}{
		{`"u1"`, true},
		{`"\ud83d\ude00"`, true},
		{`"사용자"`, true},
		{`""`, true},
		{`"\ud800"`, false},
		{"\"a\xffb\"", false},
		{`"a"b"`, false},
		{`u1`, false},
		{`"`, false},
	}
	for _, tt := range tests {
		if got := validJSONString([]byte(tt.raw)); got != tt.want {
			t.Errorf("%q: got %v, want %v", tt.raw, got, tt.want)
		}
	}
}
