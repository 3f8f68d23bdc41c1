// Package awsapi holds the wire types of the simulated cloud's AWS face: the
// AWS Query protocol's XML responses of Amazon EC2 Auto Scaling (API
// version 2011-01-01) and Amazon EC2 (2016-11-15), their error bodies and
// error codes, as the unmodified AWS SDK for Go v2 and the AWS CLI read
// them. It has no logic and imports no SDK; the translation onto the core
// is package awsface's.
//
// Auto Scaling answers <{Action}Response><{Action}Result>...</{Action}Result>
// <ResponseMetadata><RequestId/></ResponseMetadata></{Action}Response> with
// lists as <Name><member/></Name>; EC2 answers <{Action}Response><requestId/>
// ...</{Action}Response> with lowerCamel names and lists as <nameSet><item/>.
package awsapi

import "encoding/xml"

// Protocol constants.
const (
	AutoScalingVersion   = "2011-01-01"
	AutoScalingNamespace = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
	EC2Version           = "2016-11-15"
	EC2Namespace         = "http://ec2.amazonaws.com/doc/2016-11-15/"
	// ServiceAutoScaling and ServiceEC2 are the services' signing names
	// (the SigV4 credential scope's service).
	ServiceAutoScaling = "autoscaling"
	ServiceEC2         = "ec2"
)

// Error codes of both services.
const (
	CodeSignatureDoesNotMatch       = "SignatureDoesNotMatch"
	CodeInvalidClientTokenID        = "InvalidClientTokenId"
	CodeIncompleteSignature         = "IncompleteSignature"
	CodeMissingAuthToken            = "MissingAuthenticationToken"
	CodeAuthFailure                 = "AuthFailure"
	CodeRequestExpired              = "RequestExpired"
	CodeInvalidAction               = "InvalidAction"
	CodeMissingAction               = "MissingAction"
	CodeValidationError             = "ValidationError"
	CodeAlreadyExists               = "AlreadyExists"
	CodeResourceInUse               = "ResourceInUse"
	CodeScalingActivityInProg       = "ScalingActivityInProgress"
	CodeLimitExceeded               = "LimitExceeded"
	CodeInvalidNextToken            = "InvalidNextToken"
	CodeThrottling                  = "Throttling"
	CodeInternalFailure             = "InternalFailure"
	CodeServiceUnavailable          = "ServiceUnavailable"
	CodeRequestLimitExceeded        = "RequestLimitExceeded"
	CodeInternalError               = "InternalError"
	CodeUnavailable                 = "Unavailable"
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameter            = "InvalidParameter"
	CodeMissingParameter            = "MissingParameter"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
	CodeInvalidAMIIDNotFound        = "InvalidAMIID.NotFound"
	CodeInvalidAMIIDMalformed       = "InvalidAMIID.Malformed"
	CodeInvalidInstanceIDNF         = "InvalidInstanceID.NotFound"
	CodeInvalidInstanceIDMal        = "InvalidInstanceID.Malformed"
	CodeLTNameNotFound              = "InvalidLaunchTemplateName.NotFoundException"
	CodeLTIDNotFound                = "InvalidLaunchTemplateId.NotFound"
	CodeLTIDMalformed               = "InvalidLaunchTemplateId.Malformed"
	CodeLTIDVersionNotFound         = "InvalidLaunchTemplateId.VersionNotFound"
	CodeLTNameAlreadyExists         = "InvalidLaunchTemplateName.AlreadyExistsException"
	CodeLTNameMalformed             = "InvalidLaunchTemplateName.MalformedException"
	CodeLTMaxVersionsExceeded       = "VersionLimitExceeded"
	CodeLTDefaultVersionDelete      = "InvalidLaunchTemplateVersion.DefaultVersion"
	CodeInvalidSubnetIDNF           = "InvalidSubnetID.NotFound"
	CodeInvalidVpcIDNF              = "InvalidVpcID.NotFound"
	CodeInvalidInstanceType         = "InvalidInstanceType"
	CodeVcpuLimitExceeded           = "VcpuLimitExceeded"
	CodeInvalidUserDataLimit        = "InvalidUserData.Malformed"
	CodeInvalidFilter               = "InvalidFilter"
	CodeInvalidPaginationToken      = "InvalidPaginationToken"
)

// ASGErrorResponse is Auto Scaling's error body.
type ASGErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Error     ASGError `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

// ASGError is the error of an ASGErrorResponse: Type Sender or Receiver.
type ASGError struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// EC2ErrorResponse is EC2's error body.
type EC2ErrorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []EC2Error `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

// EC2Error is one error of an EC2ErrorResponse.
type EC2Error struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// ResponseMetadata ends every Auto Scaling response.
type ResponseMetadata struct {
	RequestID string `xml:"RequestId"`
}
