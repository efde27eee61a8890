// Package deploy holds the Kubernetes deployment of bulwark (helm/bulwark)
// and its checks. It is a module of its own, so that the Kubernetes API
// types it checks against never become dependencies of bulwark itself.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// rendered reads the chart as `helm template` rendered it into the file
// BULWARK_CHART_RENDERED names (scripts/test renders it, validates it with
// kubeconform, and runs this test); it skips without one, except under
// CI=true.
func rendered(t *testing.T) map[string][]byte {
	t.Helper()
	path := os.Getenv("BULWARK_CHART_RENDERED")
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but BULWARK_CHART_RENDERED is not set (scripts/test renders the chart)")
		}
		t.Skip("needs BULWARK_CHART_RENDERED: the output of helm template deploy/helm/bulwark (scripts/test)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "" {
			out[meta.Kind+"/"+meta.Metadata.Name] = doc
		}
	}
	return out
}

// decode reads one object strictly: a field the type lacks fails.
func decode(t *testing.T, docs map[string][]byte, key string, into any) {
	t.Helper()
	doc, ok := docs[key]
	if !ok {
		t.Fatalf("no %s in the rendered chart (it has %v)", key, keys(docs))
	}
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestChartHardening: every container of the chart runs as a non-root
// user on a read-only root filesystem, without capabilities or privilege
// escalation, under the runtime's seccomp profile, with resource limits;
// bulwark's are probed on /healthz; the replicas are more than one and a
// PodDisruptionBudget keeps all but one of them through a voluntary
// disruption; secrets are files, never environment values in the chart.
func TestChartHardening(t *testing.T) {
	docs := rendered(t)
	var d appsv1.Deployment
	decode(t, docs, "Deployment/bulwark", &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas: %v", d.Spec.Replicas)
	}
	checkPod(t, "Deployment/bulwark", &d.Spec.Template.Spec)
	c := d.Spec.Template.Spec.Containers[0]
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
			t.Errorf("bulwark's probes must GET /healthz: %+v", p)
		}
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--auth=apikey", "--redis-password-file=", "--request-state-key-file=", "--allowed-hosts="} {
		if !strings.Contains(args, want) {
			t.Errorf("bulwark's arguments lack %s: %s", want, args)
		}
	}
	for _, e := range c.Env {
		if e.Value != "" && strings.Contains(strings.ToLower(e.Name), "token") {
			t.Errorf("a credential as a literal environment value: %s", e.Name)
		}
		if e.Name == "BULWARK_REDIS_URL" && strings.Contains(e.Value, "@") {
			t.Errorf("the Redis URL holds a password: %s", e.Value)
		}
	}

	var pdb policyv1.PodDisruptionBudget
	decode(t, docs, "PodDisruptionBudget/bulwark", &pdb)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget: %+v", pdb.Spec)
	}
	if fmt.Sprint(pdb.Spec.Selector.MatchLabels) != fmt.Sprint(d.Spec.Selector.MatchLabels) {
		t.Errorf("the budget selects %v, the Deployment %v", pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels)
	}

	var svc corev1.Service
	decode(t, docs, "Service/bulwark", &svc)
	if fmt.Sprint(svc.Spec.Selector) != fmt.Sprint(d.Spec.Selector.MatchLabels) {
		t.Errorf("the Service selects %v", svc.Spec.Selector)
	}

	var redis appsv1.StatefulSet
	decode(t, docs, "StatefulSet/bulwark-redis", &redis)
	checkPod(t, "StatefulSet/bulwark-redis", &redis.Spec.Template.Spec)
}

// checkPod checks the pod's and each container's security settings and
// limits.
func checkPod(t *testing.T, what string, p *corev1.PodSpec) {
	t.Helper()
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		t.Errorf("%s mounts a service account token", what)
	}
	if p.SecurityContext == nil || p.SecurityContext.RunAsNonRoot == nil || !*p.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: the pod may run as root", what)
	}
	if p.HostNetwork || p.HostPID || p.HostIPC {
		t.Errorf("%s shares a host namespace", what)
	}
	for _, c := range p.Containers {
		s := c.SecurityContext
		switch {
		case s == nil:
			t.Errorf("%s/%s: no security context", what, c.Name)
			continue
		case s.RunAsNonRoot == nil || !*s.RunAsNonRoot || s.RunAsUser == nil || *s.RunAsUser == 0:
			t.Errorf("%s/%s: may run as root", what, c.Name)
		case s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem:
			t.Errorf("%s/%s: the root filesystem is writable", what, c.Name)
		case s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation || (s.Privileged != nil && *s.Privileged):
			t.Errorf("%s/%s: may escalate privileges", what, c.Name)
		case s.Capabilities == nil || len(s.Capabilities.Add) > 0 || len(s.Capabilities.Drop) != 1 || s.Capabilities.Drop[0] != "ALL":
			t.Errorf("%s/%s: capabilities %+v, want all dropped", what, c.Name, s.Capabilities)
		case s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
			t.Errorf("%s/%s: seccomp %+v", what, c.Name, s.SeccompProfile)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Limits[r]; !ok {
				t.Errorf("%s/%s: no %s limit", what, c.Name, r)
			}
			if _, ok := c.Resources.Requests[r]; !ok {
				t.Errorf("%s/%s: no %s request", what, c.Name, r)
			}
		}
	}
}
