package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
)

// FileSuffix ends the name of every pin file.
const FileSuffix = ".pins.json"

// DefaultDir is where a gateway keeps its pin files when no data directory
// is given: $XDG_DATA_HOME/bulwark/gateway, else
// ~/.local/share/bulwark/gateway; "" when neither HOME nor an absolute
// XDG_DATA_HOME is set.
func DefaultDir(getenv func(string) string) string {
	return atomicfile.DataDir(getenv, "gateway")
}

// PathFor is the pin file in dir of one gateway: id names the gateway — the
// absolute path of its configuration file, or for a gateway without one its
// command line — so two gateways never share pins. The file is named after
// id's last element and a hash of id: "gateway-3f2a…pins.json".
func PathFor(dir, id string) (string, error) {
	if dir == "" || id == "" {
		return "", errors.New("pin file: no data directory or no gateway id")
	}
	base := strings.TrimSuffix(filepath.Base(id), filepath.Ext(id))
	var b strings.Builder
	for _, c := range []byte(base) {
		if b.Len() >= 32 {
			break
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		b.WriteString("gateway")
	}
	h := sha256.Sum256([]byte(id))
	return filepath.Join(dir, b.String()+"-"+hex.EncodeToString(h[:6])+FileSuffix), nil
}
