"""First candidates that fit a stated specimen (column, else text), per set of a stated_axes.py file."""
import json, sys
from codemap.domains.lab.loinc import long_name_system, system_specimen_of, text_axes
from codemap.domains.lab.specimens import Specimen
from codemap.domains.lab.text import column_specimen
for path in sys.argv[1:]:
    out = {}
    for s in json.load(open(path)):
        stated_n = fit = 0
        for row in s["rows"]:
            st = column_specimen(row)
            if not st:
                a = text_axes(row["text"])
                st = Specimen(a.group, a.qualifier) if a.group else Specimen()
            if not st or not row["codes"]:
                continue
            stated_n += 1
            sysname = long_name_system({"code": row["codes"][0], "name": row["names"][0]})
            found = system_specimen_of(sysname) if sysname else Specimen()
            fit += bool(found) and not st.contradicted_by(found)
        out[s["set"]] = f"{fit}/{stated_n}"
    print(path.split("/")[-1], out)
