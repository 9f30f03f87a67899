package remote

import (
	"errors"
	"os"
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
	return systemKeyring{}
}

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
