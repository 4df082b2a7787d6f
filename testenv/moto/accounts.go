package moto

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Account is an AWS account of moto's other than its default one, with
// credentials of its own: moto (5.x) keeps each account's resources apart
// and tells a request's account from its access key when the key is one
// it issued.
type Account struct {
	// ID is the account's id.
	ID string
	// Env are the account's credentials as the AWS SDK reads them from
	// the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
	// AWS_SESSION_TOKEN.
	Env map[string]string
	// Route53 is a Route53 client of the account.
	Route53 *Route53
}

// AccountT returns credentials of the account id, which moto issues to
// whoever assumes a role in it (the role need not exist: moto's way to
// switch accounts). The environment must reach moto (Route53T).
func (r *Route53) AccountT(t testing.TB, id string) Account {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::" + id + ":role/dns"), RoleSessionName: aws.String("zonestream-test")})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Credentials
	static := credentials.NewStaticCredentialsProvider(*c.AccessKeyId, *c.SecretAccessKey, *c.SessionToken)
	return Account{
		ID: id,
		Env: map[string]string{"AWS_ACCESS_KEY_ID": *c.AccessKeyId, "AWS_SECRET_ACCESS_KEY": *c.SecretAccessKey,
			"AWS_SESSION_TOKEN": *c.SessionToken},
		Route53: &Route53{Client: route53.NewFromConfig(cfg, func(o *route53.Options) { o.Credentials = static }), URL: r.URL},
	}
}
