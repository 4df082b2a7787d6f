package externaldns

import "os"

// A declared provider gets the credentials of its own Secret, never the
// process' own: a team's DNSProvider naming aws without a Secret must not
// write with the cloud identity zonestream runs as (its IRSA role, its
// keys), which may reach every zone. So while a declared provider is built,
// the variables through which ExternalDNS' providers and their SDKs find
// ambient credentials, or a target of the operator's (ETCD_URLS), are
// unset unless the Secret gives them, and AWS' shared files and instance
// metadata are turned off unless the Secret turns them on. Region and
// endpoint variables (AWS_REGION, AWS_ENDPOINT_URL) stay the process'.
//
// What no variable turns off is left: a Google provider without
// credentials still finds the metadata server's (GKE workload identity),
// and a provider's file flags (--azure-config-file, --oci-config-file,
// --alibaba-cloud-config-file) name files of the pod; the controller
// decides which settings an object may give.
var ambientCredentials = []string{
	// aws-sdk-go-v2 (config.NewEnvConfig): keys, profiles, IRSA, ECS.
	"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	// Google's application default credentials (a key file).
	"GOOGLE_APPLICATION_CREDENTIALS",
	// Azure's identity (workload identity, a client secret).
	"AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_CLIENT_CERTIFICATE_PASSWORD", "AZURE_USERNAME", "AZURE_PASSWORD",
	// What ExternalDNS' providers read themselves.
	"CF_API_TOKEN", "CF_API_KEY", "CF_API_EMAIL",
	"DNSIMPLE_OAUTH", "DNSIMPLE_ACCOUNT_ID",
	"LINODE_TOKEN", "NS1_APIKEY",
	"ETCD_URLS", "ETCD_USERNAME", "ETCD_PASSWORD", "ETCD_CA_FILE", "ETCD_CERT_FILE", "ETCD_KEY_FILE",
	"ETCD_TLS_SERVER_NAME", "ETCD_TLS_INSECURE",
	// go-ovh's and Scaleway's SDK configuration.
	"OVH_ENDPOINT", "OVH_APPLICATION_KEY", "OVH_APPLICATION_SECRET", "OVH_CONSUMER_KEY", "OVH_CLIENT_ID", "OVH_CLIENT_SECRET",
	"SCW_ACCESS_KEY", "SCW_SECRET_KEY", "SCW_DEFAULT_ORGANIZATION_ID", "SCW_DEFAULT_PROJECT_ID", "SCW_PROFILE", "SCW_CONFIG_PATH",
}

// ambientOff are set while a declared provider is built, unless its
// Secret sets them: no AWS shared files (~/.aws), no instance metadata
// (the node's role).
var ambientOff = map[string]string{
	"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	"AWS_CONFIG_FILE":             os.DevNull,
	"AWS_EC2_METADATA_DISABLED":   "true",
}

// isolated is the environment a declared provider is built in, as the
// changes setEnv makes: env, every ambient variable env does not give
// unset (nil), ambientOff where env does not say.
func isolated(env map[string]string) map[string]*string {
	out := make(map[string]*string, len(env)+len(ambientCredentials)+len(ambientOff))
	for _, k := range ambientCredentials {
		out[k] = nil
	}
	for k, v := range ambientOff {
		out[k] = &v
	}
	for k, v := range env {
		out[k] = &v
	}
	return out
}
