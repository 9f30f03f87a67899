package remote

import (
	"errors"
	"os"
	"runtime"
	"strings"

	"github.com/zalando/go-keyring"
)

// Keyring keeps API keys. Get returns ErrNoKey for a name it has no key
// for.
type Keyring interface {
	Get(name string) (string, error)
	Set(name, key string) error
	Delete(name string) error
	// Where says where keys are kept, for people ("the system keyring").
	Where() string
}

// ErrNoKey: the keyring has no key for the connection.
var ErrNoKey = errors.New("remote: no key in the keyring")

// keyringService is the service name keys are kept under.
const keyringService = "churon"

// SystemKeyring is the operating system's keyring (go-keyring), or nil
// when CHURON_KEYRING=off (tests, and people who prefer the file).
func SystemKeyring() Keyring {
	if v := strings.ToLower(strings.TrimSpace(os.Getenv("CHURON_KEYRING"))); v == "off" || v == "0" || v == "file" {
		return nil
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		// The Secret Service lives on the session bus; without one, D-Bus
		// would try to start a bus of its own (dbus-launch) for nothing.
		return unavailable{why: "no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set"}
	}
	return systemKeyring{}
}

// unavailable is a keyring that cannot be reached, and says why.
type unavailable struct{ why string }

func (u unavailable) Get(string) (string, error) { return "", errors.New(u.why) }
func (u unavailable) Set(string, string) error   { return errors.New(u.why) }
func (u unavailable) Delete(string) error        { return nil }
func (u unavailable) Where() string              { return "the system keyring" }

type systemKeyring struct{}

func (systemKeyring) Get(name string) (string, error) {
	k, err := keyring.Get(keyringService, name)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", ErrNoKey
	}
	return k, err
}

func (systemKeyring) Set(name, key string) error { return keyring.Set(keyringService, name, key) }

func (systemKeyring) Delete(name string) error {
	err := keyring.Delete(keyringService, name)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

func (systemKeyring) Where() string { return "the system keyring" }
