package kernel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// TestReadOnlyAllowListNamingAWriteTool: the contradiction is a typed error
// naming the tool, so that a command can name its own settings.
func TestReadOnlyAllowListNamingAWriteTool(t *testing.T) {
	_, err := kernel.New(kernel.Info{Name: "t"}, testTools(new([]string)), &kernel.Options{ReadOnly: true, Allow: []string{"get_item", "delete_item"}})
	if !errors.Is(err, kernel.ErrWriteToolReadOnly) || !strings.Contains(err.Error(), "delete_item") {
		t.Fatalf("New = %v", err)
	}
	if _, err := kernel.New(kernel.Info{Name: "t"}, testTools(new([]string)), &kernel.Options{ReadOnly: true, Allow: []string{"get_*"}}); err != nil {
		t.Fatalf("a pattern that also matches write tools is not a contradiction: %v", err)
	}
}
