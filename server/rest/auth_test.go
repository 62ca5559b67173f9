package rest_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/rest"
)

// issuer is a test OAuth issuer: an RSA key and its key set file.
type issuer struct {
	key  *rsa.PrivateKey
	jwks string
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes())}}}
	data, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &issuer{key: key, jwks: path}
}

func (is *issuer) token(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(is.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuth_BasicAndBearerRoles(t *testing.T) {
	is := newIssuer(t)
	hash, err := rest.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	readerHash, _ := rest.HashPassword("look")
	auth, err := rest.NewAuth(
		[]server.User{{Name: "ops", PasswordHash: hash, Role: server.RoleAdmin}, {Name: "eve", PasswordHash: readerHash, Role: server.RoleReader}},
		&server.OAuthConfig{Issuer: "https://idp.test", Audience: "flowtrack", JWKSFile: is.jwks,
			Roles: map[string]server.Role{"ft-worker": server.RoleWorker}})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := served(t, auth)
	basic := func(user, pw string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
	}
	now := time.Now()
	good := jwt.MapClaims{"iss": "https://idp.test", "aud": "flowtrack", "sub": "worker-1", "exp": now.Add(time.Hour).Unix(), "roles": []string{"ft-worker"}}
	bearer := func(c jwt.MapClaims) string { return "Bearer " + is.token(t, c) }
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range good {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	activate := map[string]any{"type": "none", "timeout": 1000, "maxJobsToActivate": 1, "requestTimeout": -1}
	cases := []struct {
		name, method, path string
		body               any
		authz              string
		status             int
	}{
		{"status needs no credentials", "GET", "/v2/status", nil, "", 204},
		{"no credentials", "GET", "/v2/topology", nil, "", 401},
		{"admin by Basic", "POST", "/v2/clock/reset", nil, basic("ops", "s3cret"), 204},
		{"wrong password", "GET", "/v2/topology", nil, basic("ops", "guess"), 401},
		{"unknown user", "GET", "/v2/topology", nil, basic("mallory", "s3cret"), 401},
		{"reader reads", "POST", "/v2/process-instances/search", map[string]any{}, basic("eve", "look"), 200},
		{"reader may not activate jobs", "POST", "/v2/jobs/activation", activate, basic("eve", "look"), 403},
		{"worker token activates jobs", "POST", "/v2/jobs/activation", activate, bearer(good), 200},
		{"worker may not pin the clock", "PUT", "/v2/clock", map[string]any{"timestamp": 1}, bearer(good), 403},
		{"expired token", "GET", "/v2/topology", nil, bearer(with("exp", now.Add(-time.Hour).Unix())), 401},
		{"wrong issuer", "GET", "/v2/topology", nil, bearer(with("iss", "https://evil.test")), 401},
		{"wrong audience", "GET", "/v2/topology", nil, bearer(with("aud", "other")), 401},
		{"no mapped role", "GET", "/v2/topology", nil, bearer(with("roles", []string{"guest"})), 403},
		{"tampered token", "GET", "/v2/topology", nil, bearer(good) + "x", 401},
	}
	for _, c := range cases {
		var hdr []string
		if c.authz != "" {
			hdr = []string{"Authorization", c.authz}
		}
		status, body := do(t, c.method, base+c.path, c.body, nil, hdr...)
		if status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, status, body, c.status)
		}
	}
	var me map[string]any
	do(t, "GET", base+"/v2/authentication/me", nil, &me, "Authorization", bearer(good))
	if me["username"] != "worker-1" || me["roles"].([]any)[0] != "worker" {
		t.Errorf("me = %v", me)
	}
}

func TestNewAuth_RejectsBadConfiguration(t *testing.T) {
	hash, _ := rest.HashPassword("pw")
	type config struct {
		users []server.User
		oauth *server.OAuthConfig
	}
	for name, cfg := range map[string]config{
		"nobody":          {},
		"only nkey users": {users: []server.User{{NKey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", Role: server.RoleAdmin}}},
		"plain text":      {users: []server.User{{Name: "a", PasswordHash: "pw", Role: server.RoleAdmin}}},
		"unknown role":    {users: []server.User{{Name: "a", PasswordHash: hash, Role: "root"}}},
		"no issuer":       {oauth: &server.OAuthConfig{JWKSFile: "x"}},
		"no key set":      {oauth: &server.OAuthConfig{Issuer: "i"}},
		"missing jwks":    {oauth: &server.OAuthConfig{Issuer: "i", JWKSFile: filepath.Join(t.TempDir(), "none.json")}},
		"duplicate user":  {users: []server.User{{Name: "a", PasswordHash: hash, Role: server.RoleAdmin}, {Name: "a", PasswordHash: hash, Role: server.RoleReader}}},
	} {
		if _, err := rest.NewAuth(cfg.users, cfg.oauth); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAuth_WorkerJobTypes: the REST API's Basic users are the server
// configuration's, and a worker's job types bound the jobs it activates
// and completes over REST as over NATS: the server checks the job
// operations as the REST caller's (server.CallerHeader).
func TestAuth_WorkerJobTypes(t *testing.T) {
	hash, err := rest.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &server.NetConfig{Users: []server.User{
		{Name: "ops", PasswordHash: hash, Role: server.RoleAdmin},
		{Name: "payer", PasswordHash: hash, Role: server.RoleWorker, JobTypes: []string{"ct.double"}},
		{Name: "shipper", PasswordHash: hash, Role: server.RoleWorker, JobTypes: []string{"ct.ship"}},
		{NKey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", Role: server.RoleAdmin},
	}}
	auth, err := rest.NewAuth(cfg.Users, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := servedAccess(t, auth, cfg.Access())
	as := func(user string) []string {
		return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":pw"))}
	}
	if status, body := deployAs(t, base, "straight.bpmn", as("ops")...); status != http.StatusOK {
		t.Fatalf("deploy: %d %s", status, body)
	}
	if status, body := do(t, "POST", base+"/v2/process-instances", map[string]any{"processDefinitionId": "ct-straight"}, nil, as("ops")...); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	activate := rest.JobActivationRequest{Type: "ct.double", Worker: "w", Timeout: 60_000, MaxJobsToActivate: 1, RequestTimeout: 20_000}
	if status, body := do(t, "POST", base+"/v2/jobs/activation", activate, nil, as("shipper")...); status != http.StatusForbidden {
		t.Errorf("shipper activates ct.double: %d %s, want 403", status, body)
	}
	var act rest.JobActivationResult
	if status, body := do(t, "POST", base+"/v2/jobs/activation", activate, &act, as("payer")...); status != http.StatusOK || len(act.Jobs) != 1 {
		t.Fatalf("payer activates ct.double: %d %s", status, body)
	}
	complete := base + "/v2/jobs/" + act.Jobs[0].JobKey + "/completion"
	for _, path := range []string{complete, base + "/v2/jobs/" + act.Jobs[0].JobKey + "/failure"} {
		if status, body := do(t, "POST", path, map[string]any{}, nil, as("shipper")...); status != http.StatusForbidden {
			t.Errorf("shipper POST %s: %d %s, want 403", path, status, body)
		}
	}
	if status, body := do(t, "POST", complete, map[string]any{}, nil, as("payer")...); status != http.StatusNoContent {
		t.Errorf("payer completes its job: %d %s", status, body)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flowtrack test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestListen_TLSAndLoopbackRule(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := rest.Listen(rest.ListenConfig{Addr: "0.0.0.0:0", API: rest.Config{Conn: nc}}); !errors.Is(err, rest.ErrInsecure) {
		t.Fatalf("beyond loopback without auth: %v, want ErrInsecure", err)
	}
	certFile, keyFile, pool := selfSigned(t)
	srv, err := rest.Listen(rest.ListenConfig{Addr: "127.0.0.1:0", TLSCert: certFile, TLSKey: keyFile, API: rest.Config{Conn: nc}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(srv.URL() + "/v2/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.TLS == nil {
		t.Fatalf("GET /v2/status over TLS: %d (TLS %v)", resp.StatusCode, resp.TLS != nil)
	}
	plain, err := http.Get("http" + srv.URL()[len("https"):] + "/v2/status")
	if err == nil && plain.StatusCode == http.StatusNoContent {
		t.Fatal("the TLS listener answered plain HTTP")
	}
	if plain != nil {
		plain.Body.Close()
	}
}
