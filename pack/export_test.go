package pack

// The test helpers the source fuzz targets (package pack_test, which builds packages with
// pack/mpp and so cannot live inside package pack) share with the package's own tests.
var (
	ContractCheck = contractCheck
	Seed          = seed
	TD            = td
)
