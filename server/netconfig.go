package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/api"
	"github.com/flowtrack/flowtrack/internal/wire"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// NetConfig is the server configuration file of flowtrack serve
// (--config FILE, docs/server.md "Putting a server on a network"): the
// embedded NATS server's addresses, TLS for clients and for cluster
// routes, and the client users with their roles. Secrets are files or
// hashes in it, never flags. Read it with ReadNetConfig.
//
// # Why JSON, not the NATS configuration format?
//
// The operator writes roles, not subject permissions: flowtrack derives
// the NATS accounts, users, permissions, imports and exports from the
// roles and the cluster name (NATSConf), so the NATS server's
// permissions and the server's own check (Access) cannot drift apart, and
// a file that names a field flowtrack does not know is refused
// (encoding/json with unknown fields disallowed) instead of ignored.
type NetConfig struct {
	// Listen is the client listener, host:port (port 0 picks a free
	// one). Default 127.0.0.1:4222.
	Listen string `json:"listen,omitempty"`
	// Advertise is the host:port other servers tell clients to
	// reconnect to (NATS client_advertise); default Listen.
	Advertise string `json:"advertise,omitempty"`
	// HTTP is the REST API's listener (flowtrack serve --http), if any.
	HTTP string `json:"http,omitempty"`
	// TLS makes clients speak TLS; with VerifyClients they must present
	// a certificate the CA signed.
	TLS *TLSFiles `json:"tls,omitempty"`
	// Cluster configures the routes to the other embedded NATS servers
	// of a cluster (flowtrack serve --node).
	Cluster *RouteConfig `json:"cluster,omitempty"`
	// Users are the client users; none means no authentication. They
	// are the REST API's Basic users too (those with a password).
	Users []User `json:"users,omitempty"`
	// OAuth, when set, lets the REST API (flowtrack serve --http)
	// accept bearer JWTs of an OAuth issuer, their claims mapped to
	// the same roles.
	OAuth *OAuthConfig `json:"oauth,omitempty"`

	dir string // the file's directory: relative paths are read from it
}

// TLSFiles names PEM files: a certificate, its private key, and the CA
// that signs the peers' certificates.
type TLSFiles struct {
	Cert string `json:"cert"`
	Key  string `json:"key"`
	CA   string `json:"ca,omitempty"`
	// VerifyClients requires clients to present a certificate signed by
	// CA (mutual TLS) as well as their user's secret.
	VerifyClients bool `json:"verifyClients,omitempty"`
}

// RouteConfig is the cluster route listener of an embedded NATS server
// and the routes to the others.
type RouteConfig struct {
	// Listen is the route listener, host:port. Default 127.0.0.1:6222.
	Listen string `json:"listen,omitempty"`
	// Advertise is the host:port other servers reach this one's routes
	// on; default Listen.
	Advertise string `json:"advertise,omitempty"`
	// Routes are the other servers' route URLs (nats-route://HOST:PORT).
	Routes []string `json:"routes"`
	// TLS secures the routes; a route peer must present a certificate
	// signed by CA (routes authenticate by certificate).
	TLS *TLSFiles `json:"tls,omitempty"`
}

// User is one client user: a name with a bcrypt password hash, or an
// nkey public key (then the nkey is its name), and a role. The same
// record is a NATS user (NATSConf) and, when it has a password, a Basic
// user of the REST API (server/rest).
type User struct {
	Name         string   `json:"name,omitempty"`
	PasswordHash string   `json:"passwordHash,omitempty"`
	NKey         string   `json:"nkey,omitempty"`
	Role         Role     `json:"role"`
	JobTypes     []string `json:"jobTypes,omitempty"`
}

// OAuthConfig lets the REST API verify bearer JWTs: signed (RS*, PS*,
// ES*) by a key of the issuer's key set (JWKSFile, relative to the
// configuration file, or JWKSURL), issued by Issuer, for Audience when
// set, not expired. The values of RoleClaim (a string or a list; default
// "roles") map to roles through Roles; the ablest role wins.
// DefaultRole, when set, is the role of a valid token whose claims map
// to none. A token's role has no job types: an OAuth worker serves
// every type.
type OAuthConfig struct {
	Issuer      string          `json:"issuer"`
	Audience    string          `json:"audience,omitempty"`
	JWKSFile    string          `json:"jwksFile,omitempty"`
	JWKSURL     string          `json:"jwksUrl,omitempty"`
	RoleClaim   string          `json:"roleClaim,omitempty"`
	Roles       map[string]Role `json:"roles,omitempty"`
	DefaultRole Role            `json:"defaultRole,omitempty"`
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleWorker || r == RoleReader }

// Validate checks o (nil is valid: no OAuth): an issuer, one key set,
// known roles. ReadNetConfig and the REST API (rest.NewAuth) call it.
func (o *OAuthConfig) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.Issuer == "":
		return errors.New("oauth.issuer is required")
	case (o.JWKSFile == "") == (o.JWKSURL == ""):
		return errors.New("oauth: exactly one of jwksFile and jwksUrl is required")
	case o.DefaultRole != "" && !o.DefaultRole.Valid():
		return fmt.Errorf("oauth.defaultRole %q: admin, worker or reader", o.DefaultRole)
	}
	for claim, r := range o.Roles {
		if !r.Valid() {
			return fmt.Errorf("oauth.roles[%q]: role %q: admin, worker or reader", claim, r)
		}
	}
	return nil
}

// ErrInsecure is returned by NetConfig.CheckExposure for a server that
// would listen beyond loopback without TLS and authentication.
var ErrInsecure = api.ErrInsecure

// ReadNetConfig reads and validates a NetConfig file. Relative file
// names in it are read from the file's directory.
func ReadNetConfig(path string) (*NetConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c NetConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("server config %s: %w", path, err)
	}
	c.dir = filepath.Dir(path)
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("server config %s: %w", path, err)
	}
	if c.OAuth != nil {
		c.OAuth.JWKSFile = c.path(c.OAuth.JWKSFile)
	}
	return &c, nil
}

func (c *NetConfig) validate() error {
	for name, addr := range map[string]string{"listen": c.Listen, "advertise": c.Advertise, "http": c.HTTP} {
		if addr == "" {
			continue
		}
		if _, _, err := hostPort(addr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := c.TLS.validate("tls"); err != nil {
		return err
	}
	if err := c.OAuth.Validate(); err != nil {
		return err
	}
	if r := c.Cluster; r != nil {
		for name, addr := range map[string]string{"cluster.listen": r.Listen, "cluster.advertise": r.Advertise} {
			if addr == "" {
				continue
			}
			if _, _, err := hostPort(addr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := r.TLS.validate("cluster.tls"); err != nil {
			return err
		}
		if r.TLS != nil && r.TLS.CA == "" {
			return errors.New("cluster.tls: a ca is required: route peers authenticate with certificates it signed")
		}
	}
	seen := map[string]bool{}
	for i, u := range c.Users {
		where := fmt.Sprintf("users[%d]", i)
		switch {
		case u.NKey != "" && (u.Name != "" || u.PasswordHash != ""):
			return fmt.Errorf("%s: an nkey user has no name or password (its public key is its name)", where)
		case u.NKey != "":
			if !nkeys.IsValidPublicUserKey(u.NKey) {
				return fmt.Errorf("%s: nkey %q is not a user public key (U...)", where, u.NKey)
			}
		case u.Name == "" || u.PasswordHash == "":
			return fmt.Errorf("%s: a name with a passwordHash, or an nkey, is required", where)
		default:
			if _, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil {
				return fmt.Errorf("%s (%s): passwordHash is not a bcrypt hash (never a password): %w", where, u.Name, err)
			}
		}
		id := u.id()
		for _, r := range id + strings.Join(u.JobTypes, "") {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("%s: a control character in a name or job type", where)
			}
		}
		if seen[id] {
			return fmt.Errorf("%s: user %q is listed twice", where, id)
		}
		seen[id] = true
		switch u.Role {
		case RoleAdmin, RoleReader:
			if len(u.JobTypes) > 0 {
				return fmt.Errorf("%s (%s): jobTypes are for the worker role", where, id)
			}
		case RoleWorker:
			if len(u.JobTypes) == 0 {
				return fmt.Errorf("%s (%s): a worker needs jobTypes (%q for every type)", where, id, AllJobTypes)
			}
			for _, t := range u.JobTypes {
				if t == "" {
					return fmt.Errorf("%s (%s): an empty job type", where, id)
				}
			}
		default:
			return fmt.Errorf("%s (%s): role %q: admin, worker or reader", where, id, u.Role)
		}
	}
	return nil
}

func (t *TLSFiles) validate(where string) error {
	if t == nil {
		return nil
	}
	if t.Cert == "" || t.Key == "" {
		return fmt.Errorf("%s: cert and key are required", where)
	}
	if t.VerifyClients && t.CA == "" {
		return fmt.Errorf("%s: verifyClients needs a ca", where)
	}
	return nil
}

func (u User) id() string {
	if u.NKey != "" {
		return u.NKey
	}
	return u.Name
}

// hostPort splits and checks host:port.
func hostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	return host, port, nil
}

// loopback reports whether a listen address reaches only this machine.
func loopback(addr string) bool {
	host, _, err := hostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ListenAddr is the client listener (Listen, or 127.0.0.1:4222).
func (c *NetConfig) ListenAddr() string {
	if c.Listen == "" {
		return "127.0.0.1:4222"
	}
	return c.Listen
}

func (r *RouteConfig) listenAddr() string {
	if r.Listen == "" {
		return "127.0.0.1:6222"
	}
	return r.Listen
}

// Access returns the role policy of the users, or nil when there are
// none (no authentication: every caller may do everything).
func (c *NetConfig) Access() *Access {
	if c == nil || len(c.Users) == 0 {
		return nil
	}
	grants := map[string]Grant{}
	for _, u := range c.Users {
		grants[u.id()] = Grant{Role: u.Role, JobTypes: u.JobTypes}
	}
	return NewAccess(grants)
}

// CheckExposure refuses (ErrInsecure) a configuration that listens
// beyond loopback, for clients or routes, without TLS and users for the
// clients and TLS for the routes, unless insecure. The REST listener
// (HTTP) is checked by the REST API itself: it needs users or OAuth.
func (c *NetConfig) CheckExposure(insecure bool) error {
	if insecure {
		return nil
	}
	if !loopback(c.ListenAddr()) && (c.TLS == nil || len(c.Users) == 0) {
		return fmt.Errorf("client listener %s: %w", c.ListenAddr(), ErrInsecure)
	}
	if r := c.Cluster; r != nil && r.TLS == nil {
		if !loopback(r.listenAddr()) {
			return fmt.Errorf("route listener %s: %w", r.listenAddr(), ErrInsecure)
		}
		for _, u := range r.Routes {
			if h, err := routeHost(u); err != nil || !loopback(h) {
				return fmt.Errorf("route %s: %w", u, ErrInsecure)
			}
		}
	}
	return nil
}

// routeHost is the host:port of a route URL.
func routeHost(u string) (string, error) {
	var rest string
	for _, scheme := range []string{"nats-route://", "nats://", "tls://"} {
		if len(u) > len(scheme) && u[:len(scheme)] == scheme {
			rest = u[len(scheme):]
		}
	}
	if rest == "" {
		return "", fmt.Errorf("route %q: not nats-route://HOST:PORT", u)
	}
	return rest, nil
}

func (c *NetConfig) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

func (c *NetConfig) tlsBlock(t *TLSFiles, verify bool) map[string]any {
	b := map[string]any{"cert_file": c.path(t.Cert), "key_file": c.path(t.Key), "timeout": 5}
	if t.CA != "" {
		b["ca_file"] = c.path(t.CA)
	}
	if verify {
		b["verify"] = true
	}
	return b
}

// nodeUser is the node account's user: each embedded server makes up its
// password when it starts, and only its own node (in the same process)
// connects with it.
const nodeUser = "flowtrack-node"

// NATSConf returns the NATS server configuration (the NATS format, of
// which JSON is a subset) of an embedded server named name, keeping
// JetStream in dir, serving flowtrack cluster cluster, whose node user
// has password nodePassword. With users it has two accounts:
// NodeAccount holds the node user and JetStream; ClientAccount holds
// the users, each with the subject permissions of its role
// (ClientPermissions), and imports the operations (sharing the caller's
// identity with the server, Access), the events and the job queues.
func (c *NetConfig) NATSConf(name, dir, cluster, nodePassword string) ([]byte, error) {
	host, port, err := hostPort(c.ListenAddr())
	if err != nil {
		return nil, err
	}
	conf := map[string]any{
		"server_name": name,
		"host":        host,
		"port":        natsPort(port),
		"jetstream":   map[string]any{"store_dir": dir},
	}
	if c.Advertise != "" {
		conf["client_advertise"] = c.Advertise
	}
	if c.TLS != nil {
		conf["tls"] = c.tlsBlock(c.TLS, c.TLS.VerifyClients)
	}
	if r := c.Cluster; r != nil {
		rh, rp, err := hostPort(r.listenAddr())
		if err != nil {
			return nil, err
		}
		cl := map[string]any{"name": "flowtrack", "host": rh, "port": natsPort(rp), "routes": r.Routes}
		if r.Advertise != "" {
			cl["advertise"] = r.Advertise
		}
		if r.TLS != nil {
			cl["tls"] = c.tlsBlock(r.TLS, true)
		}
		conf["cluster"] = cl
	}
	if len(c.Users) > 0 {
		conf["accounts"] = c.accounts(cluster, nodePassword)
	}
	// The NATS parser reads JSON strings but not \u escapes: keep ">"
	// and "&" as they are (names with control characters are refused
	// by validate).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(conf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// accounts is the NATS accounts block of a server with users.
func (c *NetConfig) accounts(cluster, nodePassword string) map[string]any {
	jobs := wire.JobStream(cluster)
	api := wire.JobAPIPrefix(cluster)
	exports := []any{
		map[string]any{"service": wire.OpSubject(cluster, "*"), "accounts": []string{ClientAccount}},
		map[string]any{"stream": eventsSubjects(cluster), "accounts": []string{ClientAccount}},
		map[string]any{"service": "$JS.ACK." + jobs + ".>", "accounts": []string{ClientAccount}},
	}
	imports := []any{
		map[string]any{"service": map[string]any{"account": NodeAccount, "subject": wire.OpSubject(cluster, "*")}, "share": true},
		map[string]any{"stream": map[string]any{"account": NodeAccount, "subject": eventsSubjects(cluster)}},
		map[string]any{"service": map[string]any{"account": NodeAccount, "subject": "$JS.ACK." + jobs + ".>"}},
	}
	// The job queues' consumers, under the client-side prefix
	// wire.JobAPIPrefix: a client account's own $JS.API subjects are
	// answered by the local server ("JetStream not enabled for account").
	for _, sub := range []struct {
		api, resp string
	}{{"CONSUMER.CREATE." + jobs + ".>", ""}, {"CONSUMER.INFO." + jobs + ".*", ""}, {"CONSUMER.MSG.NEXT." + jobs + ".*", "stream"}} {
		export := map[string]any{"service": "$JS.API." + sub.api, "accounts": []string{ClientAccount}}
		if sub.resp != "" {
			export["response_type"] = sub.resp
		}
		exports = append(exports, export)
		imports = append(imports, map[string]any{"service": map[string]any{"account": NodeAccount, "subject": "$JS.API." + sub.api}, "to": api + "." + sub.api})
	}
	var users []any
	for _, u := range c.Users {
		perms := ClientPermissions(cluster, Grant{Role: u.Role, JobTypes: u.JobTypes})
		entry := map[string]any{"permissions": map[string]any{
			"publish":   map[string]any{"allow": perms.Publish},
			"subscribe": map[string]any{"allow": perms.Subscribe},
		}}
		if u.NKey != "" {
			entry["nkey"] = u.NKey
		} else {
			entry["user"] = u.Name
			entry["password"] = u.PasswordHash
		}
		users = append(users, entry)
	}
	return map[string]any{
		NodeAccount: map[string]any{
			"jetstream": "enabled",
			"users":     []any{map[string]any{"user": nodeUser, "password": nodePassword}},
			"exports":   exports,
		},
		ClientAccount: map[string]any{"users": users, "imports": imports},
	}
}

// natsPort is a listener's port for the NATS server: 0, a free one, is
// its RANDOM_PORT.
func natsPort(port int) int {
	if port == 0 {
		return natsserver.RANDOM_PORT
	}
	return port
}

// eventsSubjects matches every event subject of cluster.
func eventsSubjects(cluster string) string { return "flowtrack." + cluster + ".events.>" }

// Permissions are the subjects a client user may publish to and
// subscribe to; everything else is refused by the NATS server.
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// ClientPermissions returns the NATS subject permissions of a client
// user of cluster with grant g (docs/server.md, "Subjects and who may use
// them"): the operations of its role, the events for admins and
// readers, and for workers (and admins) the job queues of their types
// through the JetStream API subjects of those queues' consumers only,
// under wire.JobAPIPrefix.
// No client may use a partition subject, a KV bucket or any other
// JetStream API subject.
func ClientPermissions(cluster string, g Grant) Permissions {
	p := Permissions{Subscribe: []string{"_INBOX.>"}}
	ops := g.Role.Ops()
	if g.Role == RoleAdmin {
		p.Publish = append(p.Publish, wire.OpSubject(cluster, "*"))
	}
	for _, op := range ops {
		p.Publish = append(p.Publish, wire.OpSubject(cluster, op))
	}
	if g.Role == RoleAdmin || g.Role == RoleReader {
		p.Subscribe = append(p.Subscribe, eventsSubjects(cluster))
	}
	types := g.JobTypes
	if g.Role == RoleAdmin {
		types = []string{AllJobTypes}
	}
	if g.Role == RoleAdmin || g.Role == RoleWorker {
		jobs, api := wire.JobStream(cluster), wire.JobAPIPrefix(cluster)
		for _, t := range types {
			tok, filter := "*", wire.JobSubjectPrefix(cluster)+"*"
			if t != AllJobTypes {
				tok, filter = wire.JobToken(t), wire.JobSubject(cluster, t)
			}
			p.Publish = append(p.Publish,
				api+".CONSUMER.CREATE."+jobs+"."+tok+"."+filter,
				api+".CONSUMER.INFO."+jobs+"."+tok,
				api+".CONSUMER.MSG.NEXT."+jobs+"."+tok,
				"$JS.ACK."+jobs+"."+tok+".>")
		}
	}
	return p
}

// Embedded is an embedded NATS server started from a NetConfig, and how
// its own node connects to it.
type Embedded struct {
	*natsserver.Server
	password string
	auth     bool
}

// StartEmbedded starts the embedded NATS server of cfg named name (a
// node's name, or "flowtrack"), JetStream in dir with sync_always,
// serving flowtrack cluster cluster. It returns once the server accepts
// connections; routes to the other servers form in the background.
func StartEmbedded(cfg *NetConfig, name, dir, cluster string) (*Embedded, error) {
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("embedded NATS server: node secret: %w", err)
	}
	e := &Embedded{password: hex.EncodeToString(secret), auth: len(cfg.Users) > 0}
	conf, err := cfg.NATSConf(name, dir, cluster, e.password)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server %s: %w", name, err)
	}
	opts := &natsserver.Options{}
	if err := opts.ProcessConfigString(string(conf)); err != nil {
		return nil, fmt.Errorf("embedded NATS server %s: configuration: %w", name, err)
	}
	opts.SyncAlways = true
	opts.NoSigs = true
	opts.NoLog = true
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server %s in %s: %w", name, dir, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS server %s in %s: %w", name, dir, ErrNATSNotReady)
	}
	e.Server = ns
	return e, nil
}

// Connect connects the node to its own embedded server, in process (no
// socket, no TLS), as the node user when the server has users.
func (e *Embedded) Connect(opts ...nats.Option) (*nats.Conn, error) {
	opts = append([]nats.Option{nats.InProcessServer(e.Server)}, opts...)
	if e.auth {
		opts = append(opts, nats.UserInfo(nodeUser, e.password))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded NATS server: %w", err)
	}
	return nc, nil
}
