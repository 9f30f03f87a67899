package chat

import (
	"strconv"
	"strings"
	"time"
)

// pyStrftime formats t like Python's datetime.strftime in the C locale for
// a naive datetime (which is what strftime_now gets in Hugging Face's
// setup: datetime.now() carries no zone, so %z and %Z are empty). Besides
// the C directives it knows glibc's padding flags: %-d, %_d, %0e.
// Unknown directives are written out unchanged, as glibc does.
func pyStrftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		start := i
		i++
		var flag byte
		if f := format[i]; (f == '-' || f == '_' || f == '0' || f == '^') && i+1 < len(format) {
			flag = f
			i++
		}
		s, ok := strftimeDirective(t, format[i], flag)
		if !ok {
			b.WriteString(format[start : i+1])
			continue
		}
		b.WriteString(s)
	}
	return b.String()
}

func pad(n, width int, flag, def byte) string {
	s := strconv.Itoa(n)
	fill := def
	switch flag {
	case '-':
		return s
	case '_':
		fill = ' '
	case '0':
		fill = '0'
	}
	for len(s) < width {
		s = string(fill) + s
	}
	return s
}

func strftimeDirective(t time.Time, c, flag byte) (string, bool) {
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	var s string
	switch c {
	case 'a':
		s = t.Weekday().String()[:3]
	case 'A':
		s = t.Weekday().String()
	case 'b', 'h':
		s = t.Month().String()[:3]
	case 'B':
		s = t.Month().String()
	case 'c':
		s = pyStrftime(t, "%a %b %e %H:%M:%S %Y")
	case 'C':
		s = pad(t.Year()/100, 2, flag, '0')
	case 'd':
		s = pad(t.Day(), 2, flag, '0')
	case 'D':
		s = pyStrftime(t, "%m/%d/%y")
	case 'e':
		s = pad(t.Day(), 2, flag, ' ')
	case 'f':
		s = pad(t.Nanosecond()/1000, 6, flag, '0')
	case 'F':
		s = pyStrftime(t, "%Y-%m-%d")
	case 'G':
		y, _ := t.ISOWeek()
		s = strconv.Itoa(y)
	case 'H':
		s = pad(t.Hour(), 2, flag, '0')
	case 'I':
		s = pad(hour12, 2, flag, '0')
	case 'j':
		s = pad(t.YearDay(), 3, flag, '0')
	case 'k':
		s = pad(t.Hour(), 2, flag, ' ')
	case 'l':
		s = pad(hour12, 2, flag, ' ')
	case 'm':
		s = pad(int(t.Month()), 2, flag, '0')
	case 'M':
		s = pad(t.Minute(), 2, flag, '0')
	case 'n':
		s = "\n"
	case 'p':
		s = pick(t.Hour() < 12, "AM", "PM")
	case 'R':
		s = pyStrftime(t, "%H:%M")
	case 'S':
		s = pad(t.Second(), 2, flag, '0')
	case 't':
		s = "\t"
	case 'T', 'X':
		s = pyStrftime(t, "%H:%M:%S")
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		s = strconv.Itoa(wd)
	case 'U':
		s = pad((t.YearDay()+6-int(t.Weekday()))/7, 2, flag, '0')
	case 'V':
		_, w := t.ISOWeek()
		s = pad(w, 2, flag, '0')
	case 'w':
		s = strconv.Itoa(int(t.Weekday()))
	case 'W':
		s = pad((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, flag, '0')
	case 'x':
		s = pyStrftime(t, "%m/%d/%y")
	case 'y':
		s = pad(t.Year()%100, 2, flag, '0')
	case 'Y':
		s = strconv.Itoa(t.Year())
	case 'z', 'Z':
		s = ""
	case '%':
		s = "%"
	default:
		return "", false
	}
	if flag == '^' {
		s = strings.ToUpper(s)
	}
	return s, true
}
