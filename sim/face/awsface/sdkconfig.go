package awsface

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// DefaultSDKConfig is the AWS SDK configuration of a client of the face
// at url (the AWS face's, or the EKS face's) as its default account: the
// default region, the default key, the SDK's default retries. The tests'
// own clients, beside the provider, use it.
func DefaultSDKConfig(url string) aws.Config {
	return aws.Config{
		Region:       AWSDefaultRegion,
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider(AWSDefaultAccessKeyID, AWSDefaultSecretAccessKey, ""),
	}
}
