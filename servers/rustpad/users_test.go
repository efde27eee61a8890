package rustpad_test

import (
	"testing"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
)

// More than 200 users on a pad (anyone can open 201 sockets to a public
// pad) never blocks a tool: the info names 200 and says "and 1 more", and
// writes go through (issue 10.2).
func TestCrowdedPadStillWorks(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "pad", "hello")
	f.peer.SetHostile(fake.Hostile{Users: 201})
	var info struct {
		ActiveUsers   []string `json:"active_users"`
		MoreUsers     int      `json:"more_users"`
		MoreUsersNote string   `json:"more_users_note"`
	}
	f.ok(t, "get_document_info", map[string]any{"id": "pad"}, &info)
	if len(info.ActiveUsers) != 200 || info.MoreUsers != 1 || info.MoreUsersNote != "and 1 more users (names not shown)" {
		t.Fatalf("%d names, %d more, %q", len(info.ActiveUsers), info.MoreUsers, info.MoreUsersNote)
	}
	f.ok(t, "append_to_document", map[string]any{"id": "pad", "text": "!"}, nil)
	if got := f.peer.Text("pad"); got != "hello!" {
		t.Fatalf("pad holds %q", got)
	}
}
