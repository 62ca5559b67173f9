package rest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"
)

func TestParseJWKS_ECKey(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(map[string]any{"keys": []map[string]string{
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": base64.RawURLEncoding.EncodeToString(raw[1:33]), "y": base64.RawURLEncoding.EncodeToString(raw[33:])},
		{"kty": "oct", "kid": "ignored", "k": "c2VjcmV0"},
	}})
	keys, err := parseJWKS(set)
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := keys["e1"].(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) || len(keys) != 1 {
		t.Fatalf("parsed %v, want the EC key only", keys)
	}
	if _, err := parseJWKS([]byte(`{"keys":[{"kty":"EC","kid":"bad","crv":"P-256","x":"AA","y":"AA"}]}`)); err == nil {
		t.Fatal("a short EC coordinate was accepted")
	}
	if _, err := parseJWKS([]byte(`{"keys":[]}`)); err == nil {
		t.Fatal("an empty key set was accepted")
	}
}
