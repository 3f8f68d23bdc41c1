package itest

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
)

// AWSConfig is the AWS SDK configuration of a test's own clients of a face
// of the simulated AWS in cloud (awsface.AWSFaceName, or
// eksface.EKSFaceName): the real SDK in the default region, signing with
// the default account's key, with the SDK's default retries.
func AWSConfig(cloud *server.Server, face string) aws.Config {
	return aws.Config{
		Region:       awsface.AWSDefaultRegion,
		BaseEndpoint: aws.String(cloud.FaceURL(face)),
		Credentials:  credentials.NewStaticCredentialsProvider(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, ""),
	}
}
