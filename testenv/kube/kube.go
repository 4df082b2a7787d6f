// Package kube runs a real etcd and kube-apiserver on loopback through
// envtest. The binaries come from hack/kube-assets.sh, which builds them
// from the Go module proxy into a cache directory.
package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// DefaultVersion is the kube-apiserver hack/kube-assets.sh builds by default.
const DefaultVersion = "1.32.13"

// Cluster is a running kube-apiserver with an admin kubeconfig.
type Cluster struct {
	Config     *rest.Config
	Kubeconfig string // path to a kubeconfig file for the admin user
	Client     kubernetes.Interface
	env        *envtest.Environment
	dir        string
}

// AssetsDir finds the directory holding kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS, else the cache hack/kube-assets.sh fills.
func AssetsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	cache := os.Getenv("ZS_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "zonestream")
	}
	dir := filepath.Join(cache, "kube-assets", DefaultVersion)
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		return "", fmt.Errorf("no kube-apiserver in %s: run hack/kube-assets.sh (or set KUBEBUILDER_ASSETS)", dir)
	}
	return dir, nil
}

// Start runs etcd and kube-apiserver. CRDs are installed from the given
// files or directories.
func Start(ctx context.Context, crdPaths ...string) (*Cluster, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        crdPaths,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStopTimeout:  0,
		AttachControlPlaneOutput: os.Getenv("ZS_KUBE_LOG") != "",
	}
	// envtest's default service range has room for ~250 Services; load
	// tests create tens of thousands. Not wider than /16: kube-apiserver
	// 1.32 keeps the range as one bitmap in etcd, rewritten whole at every
	// allocation, and a /12's (128 KiB) filled etcd's 2 GiB quota before
	// 20k Services were created ("mvcc: database space exceeded").
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	// Tests create objects in bulk; client-go's default 5 QPS would make
	// them measure the rate limiter.
	cfg.QPS, cfg.Burst = 1000, 2000
	c := &Cluster{Config: cfg, env: env}
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		_ = env.Stop()
		return nil, err
	}
	user, err := env.AddUser(envtest.User{Name: "zonestream-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	if c.dir, err = os.MkdirTemp("", "zonestream-kube-"); err != nil {
		_ = env.Stop()
		return nil, err
	}
	c.Kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (c *Cluster) Stop() error {
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
	return c.env.Stop()
}

// StartT starts a cluster for the test and stops it afterwards.
func StartT(t testing.TB, crdPaths ...string) *Cluster {
	t.Helper()
	c, err := Start(context.Background(), crdPaths...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Logf("stop kube-apiserver: %v", err)
		}
	})
	return c
}

// InstallCRDs installs the CRDs found in the given files or directories
// into the running cluster (other kinds of objects in them are skipped)
// and waits until they are served: for tests of what happens when a CRD
// appears while a client runs.
func (c *Cluster) InstallCRDs(paths ...string) error {
	_, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true})
	if err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return nil
}
