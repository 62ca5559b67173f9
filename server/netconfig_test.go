package server_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "flowtrack.json")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	return file
}

const okHash = `$2a$04$abcdefghijklmnopqrstuuIYF0ZyX8Z2mG8WgHnJQ0mCm5Qm1r2pC`

// TestReadNetConfig_Refuses: a file that cannot be what the operator
// meant is refused when read, with the field that is wrong.
func TestReadNetConfig_Refuses(t *testing.T) {
	for _, tc := range []struct{ name, conf, want string }{
		{"unknown field", `{"listn":"127.0.0.1:4222"}`, `unknown field "listn"`},
		{"bad listen", `{"listen":"127.0.0.1"}`, "listen"},
		{"plain password", `{"users":[{"name":"ops","passwordHash":"secret","role":"admin"}]}`, "not a bcrypt hash"},
		{"no secret", `{"users":[{"name":"ops","role":"admin"}]}`, "passwordHash, or an nkey"},
		{"bad nkey", `{"users":[{"nkey":"SUAB","role":"admin"}]}`, "not a user public key"},
		{"bad role", `{"users":[{"name":"ops","passwordHash":"` + okHash + `","role":"root"}]}`, `role "root"`},
		{"worker without types", `{"users":[{"name":"w","passwordHash":"` + okHash + `","role":"worker"}]}`, "needs jobTypes"},
		{"reader with types", `{"users":[{"name":"r","passwordHash":"` + okHash + `","role":"reader","jobTypes":["x"]}]}`, "jobTypes are for the worker"},
		{"twice", `{"users":[{"name":"r","passwordHash":"` + okHash + `","role":"reader"},{"name":"r","passwordHash":"` + okHash + `","role":"admin"}]}`, "listed twice"},
		{"tls without key", `{"tls":{"cert":"c.pem"}}`, "cert and key"},
		{"verify without ca", `{"tls":{"cert":"c.pem","key":"k.pem","verifyClients":true}}`, "verifyClients needs a ca"},
		{"routes without ca", `{"cluster":{"routes":[],"tls":{"cert":"c.pem","key":"k.pem"}}}`, "a ca is required"},
		{"oauth without issuer", `{"oauth":{"jwksFile":"jwks.json"}}`, "oauth.issuer is required"},
		{"oauth without key set", `{"oauth":{"issuer":"https://idp.test"}}`, "exactly one of jwksFile and jwksUrl"},
		{"oauth bad role", `{"oauth":{"issuer":"https://idp.test","jwksFile":"j.json","roles":{"ops":"root"}}}`, `oauth.roles["ops"]`},
		{"oauth unknown field", `{"oauth":{"issuer":"https://idp.test","jwksFile":"j.json","scope":"x"}}`, `unknown field "scope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server.ReadNetConfig(writeConf(t, tc.conf))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestReadNetConfig_OAuth: the oauth section is read with the users, its
// key set file relative to the configuration file.
func TestReadNetConfig_OAuth(t *testing.T) {
	file := writeConf(t, `{"users":[{"name":"ops","passwordHash":"`+okHash+`","role":"admin"}],
		"oauth":{"issuer":"https://idp.test","audience":"flowtrack","jwksFile":"jwks.json","roles":{"ft-worker":"worker"}}}`)
	cfg, err := server.ReadNetConfig(file)
	require.NoError(t, err)
	require.NotNil(t, cfg.OAuth)
	assert.Equal(t, filepath.Join(filepath.Dir(file), "jwks.json"), cfg.OAuth.JWKSFile)
	assert.Equal(t, server.RoleWorker, cfg.OAuth.Roles["ft-worker"])
	assert.Equal(t, server.RoleAdmin, cfg.Users[0].Role)
}

// TestNetConfig_CheckExposure: beyond loopback, clients need TLS and
// users and routes TLS, unless the operator says insecure.
func TestNetConfig_CheckExposure(t *testing.T) {
	users := `"users":[{"name":"ops","passwordHash":"` + okHash + `","role":"admin"}]`
	tls := `"tls":{"cert":"c.pem","key":"k.pem","ca":"ca.pem"}`
	for _, tc := range []struct {
		name, conf string
		ok         bool
	}{
		{"loopback alone", `{"listen":"127.0.0.1:4222"}`, true},
		{"default address", `{}`, true},
		{"localhost", `{"listen":"localhost:4222"}`, true},
		{"network without anything", `{"listen":"0.0.0.0:4222"}`, false},
		{"network with users only", `{"listen":"10.0.0.5:4222",` + users + `}`, false},
		{"network with TLS only", `{"listen":"10.0.0.5:4222",` + tls + `}`, false},
		{"network with both", `{"listen":"10.0.0.5:4222",` + tls + `,` + users + `}`, true},
		{"routes beyond loopback without TLS", `{"cluster":{"listen":"10.0.0.5:6222","routes":[]}}`, false},
		{"a route to another machine without TLS", `{"cluster":{"routes":["nats-route://10.0.0.6:6222"]}}`, false},
		{"routes on loopback", `{"cluster":{"routes":["nats-route://127.0.0.1:6223"]}}`, true},
		{"routes with TLS", `{"cluster":{"listen":"10.0.0.5:6222","routes":["nats-route://10.0.0.6:6222"],` + tls + `}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := server.ReadNetConfig(writeConf(t, tc.conf))
			require.NoError(t, err)
			err = cfg.CheckExposure(false)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, server.ErrInsecure)
			require.NoError(t, cfg.CheckExposure(true), "--insecure")
		})
	}
}

// header is the request info a NATS server sets for user of account.
func header(account, user string) nats.Header {
	h := nats.Header{}
	if account != "" {
		h.Set(server.RequestInfoHeader, `{"acc":"`+account+`","user":"`+user+`"}`)
	}
	return h
}

// TestAccess_Check is the server's own check, whatever the NATS server
// let through: each role's operations, a worker's job types (by request
// type, and by the job's type for results), and callers it does not know.
func TestAccess_Check(t *testing.T) {
	a := server.NewAccess(map[string]server.Grant{
		"ops":  {Role: server.RoleAdmin},
		"pay":  {Role: server.RoleWorker, JobTypes: []string{"charge"}},
		"any":  {Role: server.RoleWorker, JobTypes: []string{server.AllJobTypes}},
		"look": {Role: server.RoleReader},
	})
	types := map[int64]string{1: "charge", 2: "ship"}
	jobType := func(k int64) (string, bool) { t, ok := types[k]; return t, ok }
	for _, tc := range []struct {
		account, user, op, data string
		ok                      bool
	}{
		{"", "", "restore", `{}`, true}, // the node account: no header
		{server.NodeAccount, "flowtrack-node", "deploy", `{}`, true},
		{server.ClientAccount, "ops", "restore", `{}`, true},
		{server.ClientAccount, "ops", "deploy", `{}`, true},
		{server.ClientAccount, "look", "instance", `{"instanceKey":1}`, true},
		{server.ClientAccount, "look", "jobs", `{}`, true},
		{server.ClientAccount, "look", "start", `{}`, false},
		{server.ClientAccount, "look", "complete_job", `{"jobKey":1}`, false},
		{server.ClientAccount, "look", "checkpoint", `{}`, false},
		{server.ClientAccount, "pay", "complete_job", `{"jobKey":1}`, true},
		{server.ClientAccount, "pay", "fail_job", `{"jobKey":2}`, false},
		{server.ClientAccount, "pay", "throw_error", `{"jobKey":2}`, false},
		{server.ClientAccount, "pay", "complete_job", `{"jobKey":9}`, true}, // unknown: the operation's UNKNOWN_JOB
		{server.ClientAccount, "pay", "activate_jobs", `{"type":"charge"}`, true},
		{server.ClientAccount, "pay", "activate_jobs", `{"type":"ship"}`, false},
		{server.ClientAccount, "pay", "jobs", `{}`, false},
		{server.ClientAccount, "any", "jobs", `{}`, true},
		{server.ClientAccount, "any", "complete_job", `{"jobKey":2}`, true},
		{server.ClientAccount, "pay", "publish_message", `{}`, true},
		{server.ClientAccount, "pay", "instance", `{}`, false},
		{server.ClientAccount, "pay", "start", `{}`, false},
		{server.ClientAccount, "stranger", "now", `{}`, false},
		{"OTHER", "ops", "now", `{}`, false},
	} {
		err := a.Check(header(tc.account, tc.user), tc.op, []byte(tc.data), jobType)
		if tc.ok {
			assert.NoError(t, err, "%s %s %s", tc.user, tc.op, tc.data)
			continue
		}
		var we *wire.Error
		if assert.True(t, errors.As(err, &we), "%s %s %s: %v", tc.user, tc.op, tc.data, err) {
			assert.Equal(t, wire.CodePermissionDenied, we.Code)
			assert.ErrorIs(t, err, wire.ErrPermissionDenied)
			assert.True(t, strings.HasPrefix(we.Message, "permission denied: "), we.Message)
		}
	}
	// CallerHeader: a node-account component (the REST API) has a
	// request checked as a client user's.
	assert.NoError(t, a.Check(server.CallerHeader("pay"), "activate_jobs", []byte(`{"type":"charge"}`), jobType))
	assert.ErrorIs(t, a.Check(server.CallerHeader("pay"), "activate_jobs", []byte(`{"type":"ship"}`), jobType), wire.ErrPermissionDenied)
	assert.ErrorIs(t, a.Check(server.CallerHeader("pay"), "complete_job", []byte(`{"jobKey":2}`), jobType), wire.ErrPermissionDenied)
	bad := http.Header{server.RequestInfoHeader: []string{"{"}}
	require.Error(t, a.Check(nats.Header(bad), "now", nil, nil))
}

// TestClientPermissions: no role may publish to a partition subject, a
// bucket or the JetStream API, and only workers of a type reach its queue.
func TestClientPermissions(t *testing.T) {
	for _, g := range []server.Grant{{Role: server.RoleAdmin}, {Role: server.RoleWorker, JobTypes: []string{"io.x:1"}}, {Role: server.RoleReader}} {
		p := server.ClientPermissions("c", g)
		for _, s := range append(p.Publish, p.Subscribe...) {
			assert.False(t, strings.HasPrefix(s, "$JS.API") || strings.HasPrefix(s, "$KV") || strings.HasPrefix(s, "flowtrack.c.p.") || s == ">", "%s: %s", g.Role, s)
		}
		if g.Role == server.RoleWorker {
			assert.Contains(t, p.Publish, "flowtrack.c.jsapi.CONSUMER.MSG.NEXT.FLOWTRACK_JOBS_c.io%2Ex%3A1")
			assert.NotContains(t, p.Subscribe, "flowtrack.c.events.>")
		}
	}
}
