package kernel_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// TestToolListsMatchExactly: an allow list selects names as spelled (tool
// selection is exact: allowing read_file exposes neither READ_FILE nor
// Read_File), and a deny list also ignores case, so it denies every
// spelling.
func TestToolListsMatchExactly(t *testing.T) {
	var tools []kernel.Tool
	for _, n := range []string{"read_file", "READ_FILE", "Read_File"} {
		tools = append(tools, kernel.NewTool(kernel.Spec[itemArgs, map[string]int]{Name: n, Description: "Read.", Policy: readPolicy,
			Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]int, error) { return nil, nil }}))
	}
	names := func(o kernel.Options) ([]string, error) {
		srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, tools, &o)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, t := range srv.Tools() {
			out = append(out, t.Name())
		}
		slices.Sort(out)
		return out, nil
	}
	for _, c := range []struct {
		opts kernel.Options
		want []string
	}{
		{kernel.Options{Allow: []string{"read_file"}}, []string{"read_file"}},
		{kernel.Options{Allow: []string{"READ*"}}, []string{"READ_FILE"}},
		{kernel.Options{Allow: []string{"read*", "Read_File"}}, []string{"Read_File", "read_file"}},
		{kernel.Options{Deny: []string{"read_file"}}, nil},
		{kernel.Options{Deny: []string{"read*"}}, nil},
	} {
		got, err := names(c.opts)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("allow %q deny %q: %v, %v; want %v", c.opts.Allow, c.opts.Deny, got, err, c.want)
		}
	}
	if _, err := names(kernel.Options{Allow: []string{"rEaD_fIlE"}}); err == nil || !strings.Contains(err.Error(), "matches no tool") {
		t.Errorf("an allow entry in another case: %v", err)
	}
}
