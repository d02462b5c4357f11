#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

// Debian builds libxml2 with ICU, and <libxml/encoding.h> then includes the system's
// ICU headers, whose definitions clash with the ICU copy inside Foundation. SurveyStore
// never touches libxml2's encoding-handler internals (the only place ICU appears), so
// the headers are read as if ICU were off.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

#endif
