package serve

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:0": true,
		"0.0.0.0:8080": false, ":8080": false, "192.168.1.2:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

func TestConfigFrom(t *testing.T) {
	set := map[string]string{SettingEnabled: "true", SettingAddr: " 127.0.0.1:9000 ", SettingCORS: "http://a, http://b,", SettingStore: "true", SettingAPIKey: "k"}
	cfg, on := ConfigFrom(func(k string) (string, bool) { v, ok := set[k]; return v, ok })
	if !on || cfg.Addr != "127.0.0.1:9000" || len(cfg.CORSOrigins) != 2 || cfg.CORSOrigins[1] != "http://b" || !cfg.Store || cfg.Log || cfg.APIKey != "k" {
		t.Fatalf("%+v %v", cfg, on)
	}
	if _, on := ConfigFrom(func(string) (string, bool) { return "", false }); on {
		t.Fatal("on without the setting")
	}
}
