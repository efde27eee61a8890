package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pagingChild is an upstream that answers initialize and answers every
// tools/list with no tools and the next cursor next(n) gives.
func pagingChild(t *testing.T, next func(n int) string) (*mcp.ClientSession, *int) {
	t.Helper()
	gwR, childW := io.Pipe()
	childR, gwW := io.Pipe()
	pages := new(int)
	go func() {
		in := bufio.NewScanner(childR)
		in.Buffer(nil, 1<<20)
		for in.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
				continue
			}
			var result string
			switch m.Method {
			case "initialize":
				result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pager","version":"1"}}`
			case "tools/list":
				*pages++
				result = fmt.Sprintf(`{"tools":[],"nextCursor":%q}`, next(*pages))
			default:
				result = `{}`
			}
			fmt.Fprintf(childW, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
		}
	}()
	tr := &stdioTransport{r: gwR, w: gwW, maxLine: 1 << 16}
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(); childW.Close() })
	return sess, pages
}

// TestEndlessPagingIsRefused (budget): an upstream whose tools/list never
// ends its paging — a new cursor on every empty page, or a cursor it gave
// before — is refused with an error that says so, after at most
// maxListPages requests and long before the connect timeout.
func TestEndlessPagingIsRefused(t *testing.T) {
	for name, c := range map[string]struct {
		next  func(int) string
		want  string
		pages int
	}{
		"endless": {func(n int) string { return fmt.Sprintf("c%d", n) }, "did not end within 100 pages", maxListPages},
		"repeat":  {func(n int) string { return fmt.Sprintf("c%d", min(n, 3)) }, "repeats the cursor", 4},
		"same":    {func(int) string { return "again" }, "repeats the cursor", 2},
	} {
		t.Run(name, func(t *testing.T) {
			sess, pages := pagingChild(t, c.next)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, _, err := listTools(ctx, sess, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("listTools = %v, want %q", err, c.want)
			}
			if *pages != c.pages {
				t.Errorf("%d pages asked, want %d", *pages, c.pages)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %s", d)
			}
		})
	}
}
