//go:build cgo

package toolmend

/*
#include "toolmend.h"
*/
import "C"

// The record's codes in record.go are the header's: a line below does not compile (a negative
// constant converted to uint) when the two differ, so the header and the reader cannot drift.
const (
	_ = uint(statusValid-C.TOOLMEND_CALL_STATUS_VALID) + uint(C.TOOLMEND_CALL_STATUS_VALID-statusValid)
	_ = uint(statusRepaired-C.TOOLMEND_CALL_STATUS_REPAIRED) + uint(C.TOOLMEND_CALL_STATUS_REPAIRED-statusRepaired)
	_ = uint(statusRecovered-C.TOOLMEND_CALL_STATUS_RECOVERED) + uint(C.TOOLMEND_CALL_STATUS_RECOVERED-statusRecovered)
	_ = uint(statusInvalid-C.TOOLMEND_CALL_STATUS_INVALID) + uint(C.TOOLMEND_CALL_STATUS_INVALID-statusInvalid)
	_ = uint(statusSuppressed-C.TOOLMEND_CALL_STATUS_SUPPRESSED) + uint(C.TOOLMEND_CALL_STATUS_SUPPRESSED-statusSuppressed)
	_ = uint(statusUnvalidated-C.TOOLMEND_CALL_STATUS_UNVALIDATED) + uint(C.TOOLMEND_CALL_STATUS_UNVALIDATED-statusUnvalidated)
	_ = uint(originNative-C.TOOLMEND_CALL_ORIGIN_NATIVE) + uint(C.TOOLMEND_CALL_ORIGIN_NATIVE-originNative)
	_ = uint(originContent-C.TOOLMEND_CALL_ORIGIN_CONTENT) + uint(C.TOOLMEND_CALL_ORIGIN_CONTENT-originContent)
	_ = uint(originReasoning-C.TOOLMEND_CALL_ORIGIN_REASONING) + uint(C.TOOLMEND_CALL_ORIGIN_REASONING-originReasoning)
	_ = uint(outcomeLocalSalvage-C.TOOLMEND_CALL_OUTCOME_LOCAL_SALVAGE) + uint(C.TOOLMEND_CALL_OUTCOME_LOCAL_SALVAGE-outcomeLocalSalvage)
	_ = uint(outcomeReprompt-C.TOOLMEND_CALL_OUTCOME_REPROMPT) + uint(C.TOOLMEND_CALL_OUTCOME_REPROMPT-outcomeReprompt)
	_ = uint(outcomeGaveUp-C.TOOLMEND_CALL_OUTCOME_GAVE_UP) + uint(C.TOOLMEND_CALL_OUTCOME_GAVE_UP-outcomeGaveUp)
	_ = uint(callNameIsInput-C.TOOLMEND_CALL_NAME_IS_INPUT) + uint(C.TOOLMEND_CALL_NAME_IS_INPUT-callNameIsInput)
	_ = uint(callTextIsInput-C.TOOLMEND_CALL_TEXT_IS_INPUT) + uint(C.TOOLMEND_CALL_TEXT_IS_INPUT-callTextIsInput)
	_ = uint(callArgumentsIsText-C.TOOLMEND_CALL_ARGUMENTS_IS_TEXT) + uint(C.TOOLMEND_CALL_ARGUMENTS_IS_TEXT-callArgumentsIsText)
	_ = uint(fieldID-C.TOOLMEND_FIELD_ID) + uint(C.TOOLMEND_FIELD_ID-fieldID)
	_ = uint(fieldName-C.TOOLMEND_FIELD_NAME) + uint(C.TOOLMEND_FIELD_NAME-fieldName)
	_ = uint(fieldArguments-C.TOOLMEND_FIELD_ARGUMENTS) + uint(C.TOOLMEND_FIELD_ARGUMENTS-fieldArguments)
	_ = uint(fieldArgumentsText-C.TOOLMEND_FIELD_ARGUMENTS_TEXT) + uint(C.TOOLMEND_FIELD_ARGUMENTS_TEXT-fieldArgumentsText)
	_ = uint(fieldRepairKind-C.TOOLMEND_FIELD_REPAIR_KIND) + uint(C.TOOLMEND_FIELD_REPAIR_KIND-fieldRepairKind)
	_ = uint(fieldRepairPath-C.TOOLMEND_FIELD_REPAIR_PATH) + uint(C.TOOLMEND_FIELD_REPAIR_PATH-fieldRepairPath)
	_ = uint(fieldNote-C.TOOLMEND_FIELD_NOTE) + uint(C.TOOLMEND_FIELD_NOTE-fieldNote)
	_ = uint(fieldError-C.TOOLMEND_FIELD_ERROR) + uint(C.TOOLMEND_FIELD_ERROR-fieldError)
	_ = uint(fieldNativeIndex-C.TOOLMEND_FIELD_NATIVE_INDEX) + uint(C.TOOLMEND_FIELD_NATIVE_INDEX-fieldNativeIndex)
	_ = uint(fieldStatus-C.TOOLMEND_FIELD_STATUS) + uint(C.TOOLMEND_FIELD_STATUS-fieldStatus)
	_ = uint(fieldOrigin-C.TOOLMEND_FIELD_ORIGIN) + uint(C.TOOLMEND_FIELD_ORIGIN-fieldOrigin)
	_ = uint(fieldOutcome-C.TOOLMEND_FIELD_OUTCOME) + uint(C.TOOLMEND_FIELD_OUTCOME-fieldOutcome)
	_ = uint(abiRevision-C.TOOLMEND_ABI_REVISION) + uint(C.TOOLMEND_ABI_REVISION-abiRevision)
)
