package rest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/server"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// roleRank orders the roles (server.Role, the roles of flowtrack
// serve's users, docs/server.md "Users and roles") from most to least
// able; 0 is no role. Over REST an administrator may do everything; a
// worker what job workers and the services around them do (activate and
// work jobs, publish messages and signals, create instances, set
// variables, work user tasks) and read; a reader only read (GET and
// searches, expression evaluation).
func roleRank(r server.Role) int {
	switch r {
	case server.RoleAdmin:
		return 3
	case server.RoleWorker:
		return 2
	case server.RoleReader:
		return 1
	}
	return 0
}

// Auth authenticates REST requests as the users of flowtrack serve's
// configuration (server.NetConfig: the users with a password hash, by
// Basic authentication) and the bearer JWTs of its OAuth issuer. It is
// safe for concurrent use.
type Auth struct {
	users map[string]server.User
	oauth *server.OAuthConfig
	keys  *keySet
}

// NewAuth returns the Auth of users (nkey users, which have no password,
// cannot use Basic and are skipped) and oauth (nil: no bearer tokens),
// reading oauth's key set. The users and oauth are validated as
// server.ReadNetConfig validates them; NewAuth checks again what it
// relies on.
func NewAuth(users []server.User, oauth *server.OAuthConfig) (*Auth, error) {
	a := &Auth{users: map[string]server.User{}}
	for _, u := range users {
		if u.NKey != "" {
			continue
		}
		switch {
		case u.Name == "":
			return nil, errors.New("rest auth: a user has no name")
		case !u.Role.Valid():
			return nil, fmt.Errorf("rest auth: user %q: role %q is not admin, worker or reader", u.Name, u.Role)
		case !strings.HasPrefix(u.PasswordHash, "$2"):
			return nil, fmt.Errorf("rest auth: user %q: passwordHash is not a bcrypt hash", u.Name)
		}
		if _, dup := a.users[u.Name]; dup {
			return nil, fmt.Errorf("rest auth: user %q is listed twice", u.Name)
		}
		a.users[u.Name] = u
	}
	if oauth != nil {
		if err := oauth.Validate(); err != nil {
			return nil, fmt.Errorf("rest auth: %w", err)
		}
		o := *oauth
		if o.RoleClaim == "" {
			o.RoleClaim = "roles"
		}
		a.oauth = &o
		a.keys = &keySet{file: o.JWKSFile, url: o.JWKSURL}
		if err := a.keys.load(context.Background()); err != nil {
			return nil, fmt.Errorf("rest auth: %w", err)
		}
	}
	if len(a.users) == 0 && a.oauth == nil {
		return nil, errors.New("rest auth: no users with a password and no oauth: nobody could call")
	}
	return a, nil
}

// HashPassword returns the bcrypt hash of password, for a user's
// passwordHash in the server configuration.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// identity is an authenticated caller. user is set for a configured
// user (Basic): its requests of job operations are checked by the
// server as that user's (server.CallerHeader), job types included.
type identity struct {
	name string
	role server.Role
	user bool
}

var errUnauthenticated = &problemError{status: http.StatusUnauthorized, title: "UNAUTHORIZED", detail: "authentication required: Basic credentials or a bearer token"}

// authenticate checks r's Authorization header.
func (a *Auth) authenticate(r *http.Request) (identity, error) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Basic") && len(a.users) > 0:
		name, password, ok := r.BasicAuth()
		u, known := a.users[name]
		if !ok || !known {
			// Spend the time of a comparison, so that an unknown user
			// is not told apart by timing.
			_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
			return identity{}, unauthorized("unknown user or wrong password")
		}
		if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
			return identity{}, unauthorized("unknown user or wrong password")
		}
		return identity{name: u.Name, role: u.Role, user: true}, nil
	case strings.EqualFold(scheme, "Bearer") && a.oauth != nil:
		return a.bearer(r.Context(), strings.TrimSpace(cred))
	}
	return identity{}, errUnauthenticated
}

// dummyHash is compared with the password of an unknown user.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("flowtrack"), bcrypt.DefaultCost)
	return h
})

func unauthorized(detail string) error {
	return &problemError{status: http.StatusUnauthorized, title: "UNAUTHORIZED", detail: detail}
}

// bearer verifies a JWT and maps its claims to a role.
func (a *Auth) bearer(ctx context.Context, token string) (identity, error) {
	o := a.oauth
	opts := []jwt.ParserOption{jwt.WithIssuer(o.Issuer), jwt.WithExpirationRequired(), jwt.WithLeeway(30 * time.Second),
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"})}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return a.keys.key(ctx, kid)
	}, opts...)
	if err != nil {
		return identity{}, unauthorized("bearer token rejected: " + err.Error())
	}
	var role server.Role
	var values []string
	switch v := claims[o.RoleClaim].(type) {
	case string:
		values = strings.Fields(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				values = append(values, s)
			}
		}
	}
	for _, v := range values {
		if r := o.Roles[v]; roleRank(r) > roleRank(role) {
			role = r
		}
	}
	if role == "" {
		role = o.DefaultRole
	}
	if role == "" {
		return identity{}, &problemError{status: http.StatusForbidden, title: "FORBIDDEN",
			detail: fmt.Sprintf("the token's %q claim maps to no role", o.RoleClaim)}
	}
	name, _ := claims["sub"].(string)
	if id, ok := claims["client_id"].(string); ok && name == "" {
		name = id
	}
	return identity{name: name, role: role}, nil
}

// allowed reports whether role may make request r.
func allowed(role server.Role, r *http.Request) bool {
	p := r.URL.Path
	read := r.Method == http.MethodGet || r.Method == http.MethodPost && (strings.HasSuffix(p, "/search") || p == "/v2/expression/evaluation")
	switch {
	case role == server.RoleAdmin:
		return true
	case read:
		return roleRank(role) >= roleRank(server.RoleReader)
	case role != server.RoleWorker:
		return false
	}
	switch {
	case strings.HasPrefix(p, "/v2/jobs/"), strings.HasPrefix(p, "/v2/messages/"), p == "/v2/signals/broadcast",
		p == "/v2/process-instances" && r.Method == http.MethodPost,
		strings.HasPrefix(p, "/v2/user-tasks/"),
		strings.HasPrefix(p, "/v2/element-instances/") && strings.HasSuffix(p, "/variables"):
		return true
	}
	return false
}

// keySet is an issuer's JSON Web Key Set: the public keys by key id.
type keySet struct {
	file, url string
	mu        sync.Mutex
	keys      map[string]any
	fetched   time.Time
}

// refetchAfter bounds how often an unknown key id refetches a key set
// URL.
const refetchAfter = 30 * time.Second

// key returns the key kid names ("" when the set has one key).
func (s *keySet) key(ctx context.Context, kid string) (any, error) {
	s.mu.Lock()
	k, ok := s.lookup(kid)
	stale := s.url != "" && time.Since(s.fetched) > refetchAfter
	s.mu.Unlock()
	if ok {
		return k, nil
	}
	if stale {
		if err := s.load(ctx); err != nil {
			return nil, err
		}
		s.mu.Lock()
		k, ok = s.lookup(kid)
		s.mu.Unlock()
		if ok {
			return k, nil
		}
	}
	return nil, fmt.Errorf("no key %q in the issuer's key set", kid)
}

func (s *keySet) lookup(kid string) (any, bool) {
	if kid == "" && len(s.keys) == 1 {
		for _, k := range s.keys {
			return k, true
		}
	}
	k, ok := s.keys[kid]
	return k, ok
}

// load reads the key set from its file or URL.
func (s *keySet) load(ctx context.Context) error {
	var data []byte
	var err error
	if s.file != "" {
		data, err = os.ReadFile(s.file)
	} else {
		data, err = fetch(ctx, s.url)
	}
	if err != nil {
		return fmt.Errorf("key set: %w", err)
	}
	keys, err := parseJWKS(data)
	if err != nil {
		return fmt.Errorf("key set %s%s: %w", s.file, s.url, err)
	}
	s.mu.Lock()
	s.keys, s.fetched = keys, time.Now()
	s.mu.Unlock()
	return nil
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// parseJWKS reads the RSA and EC public keys of a JSON Web Key Set (RFC
// 7517); keys of other types and private members are ignored.
func parseJWKS(data []byte) (map[string]any, error) {
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Use string `json:"use"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	keys := map[string]any{}
	b64 := func(s string) (*big.Int, error) {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(raw) == 0 {
			return nil, fmt.Errorf("bad base64url %q", s)
		}
		return new(big.Int).SetBytes(raw), nil
	}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Kty {
		case "RSA":
			n, err := b64(k.N)
			if err != nil {
				return nil, fmt.Errorf("key %q: n: %w", k.Kid, err)
			}
			e, err := b64(k.E)
			if err != nil || !e.IsInt64() {
				return nil, fmt.Errorf("key %q: bad e", k.Kid)
			}
			keys[k.Kid] = &rsa.PublicKey{N: n, E: int(e.Int64())}
		case "EC":
			var curve elliptic.Curve
			switch k.Crv {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			case "P-521":
				curve = elliptic.P521()
			default:
				return nil, fmt.Errorf("key %q: curve %q", k.Kid, k.Crv)
			}
			size := (curve.Params().BitSize + 7) / 8
			x, errX := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.X, "="))
			y, errY := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.Y, "="))
			if errX != nil || errY != nil || len(x) != size || len(y) != size {
				return nil, fmt.Errorf("key %q: x and y must be %d bytes of base64url", k.Kid, size)
			}
			pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Kid, err)
			}
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no RSA or EC signing key")
	}
	return keys, nil
}
