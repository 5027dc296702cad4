package gen

import "strconv"

// percent is a rate to one decimal in integers, rounding half up:
// tenths = (2000·a + b) div (2·b). A zero denominator is NOT ASSESSABLE with reason.
func percent(num, den int, zeroReason string) Rate {
	if den == 0 {
		return Rate{Numerator: num, Denominator: 0, Value: statusNotAssessable, Reason: zeroReason}
	}
	tenths := (2000*num + den) / (2 * den)
	return Rate{
		Numerator:   num,
		Denominator: den,
		Value:       strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "%",
	}
}
