package manager

// ApplyPolicies is applyPolicies, for the tests of package manager_test.
var ApplyPolicies = applyPolicies
