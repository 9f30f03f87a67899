module github.com/churon/churon

go 1.26.0

require github.com/ardanlabs/jinja v1.8.0
